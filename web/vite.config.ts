/**
 * The UI's build (server/scripts/build.mjs runs it; `npx vite --config web/vite.config.ts` serves it with
 * hot reload, proxying the API to a service on :8080). Output: web/dist, which the service serves at /.
 */
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));
const api = process.env.SVC_API_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root,
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: false, manifest: true, chunkSizeWarningLimit: 600 },
  server: { proxy: { '/api': api, '/oauth': api, '/v1': api } },
});
