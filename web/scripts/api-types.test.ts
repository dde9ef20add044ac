/**
 * The UI's typed client is generated from the OpenAPI document the service serves: this fails while the
 * committed web/src/api/schema.d.ts differs from a fresh generation (a route changed and the types were not
 * regenerated with `npx tsx web/scripts/api-types.ts`), so the UI never uses a route the document does not publish.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCHEMA_FILE, apiTypes } from './api-types.js';

describe('web UI API types', () => {
  it('web/src/api/schema.d.ts is what the OpenAPI document generates', async () => {
    const fresh = await apiTypes();
    const committed = fs.readFileSync(SCHEMA_FILE, 'utf8');
    expect(committed === fresh, 'web/src/api/schema.d.ts is stale: run `npx tsx web/scripts/api-types.ts`').toBe(true);
  });
});
