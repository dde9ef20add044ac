import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ALL_SCOPES } from './scopes.js';

describe('the CLI copy of the scope list', () => {
  it('matches server/src/domains/api-keys/scopes.ts (read as text: the CLI never imports server code)', () => {
    const file = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'server', 'src', 'domains', 'api-keys', 'scopes.ts');
    const text = readFileSync(file, 'utf8');
    const list = /ALL_SCOPES = \[([\s\S]*?)\] as const/.exec(text)?.[1] ?? '';
    const serverScopes = [...list.replace(/\/\/.*$/gm, '').matchAll(/'([^']+)'/g)].map((m) => m[1]);
    expect(serverScopes.length).toBeGreaterThan(0);
    expect([...ALL_SCOPES]).toEqual(serverScopes);
  });
});
