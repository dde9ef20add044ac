/** The role table and password storage (issue 3). */
import { describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../api-keys/scopes.js';
import { hashPassword, verifyPassword } from './password.js';
import { ROLE_SCOPES } from './roles.js';

describe('roles', () => {
  it('owners and admins hold every scope; audit:read is theirs only', () => {
    expect([...ROLE_SCOPES.owner].sort()).toEqual([...ALL_SCOPES].sort());
    expect([...ROLE_SCOPES.admin].sort()).toEqual([...ALL_SCOPES].sort());
    expect(ROLE_SCOPES.member).not.toContain('audit:read');
  });

  it('members hold exactly the documented scopes', () => {
    expect([...ROLE_SCOPES.member].sort()).toEqual(
      [
        'metrics:read', 'traces:read', 'logs:read', 'ingest:write', 'analytics:write', 'agents:read', 'governance:read', 'evals:read', 'scores:read', 'scores:write',
        'quarantine:request', 'activity:read', 'oauth:connections', 'docs:read', 'projects:read', 'alerts:acknowledge', 'errors:write',
        'llm:read',
      ].sort(),
    );
  });
});

describe('passwords', () => {
  it('are hashed with scrypt (N=2^15, r=8, p=1, 16-byte salt, 64-byte key) and verified', async () => {
    const stored = await hashPassword('correct horse battery staple');
    const m = /^scrypt\$32768\$8\$1\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(stored)!;
    expect(Buffer.from(m[1], 'base64')).toHaveLength(16);
    expect(Buffer.from(m[2], 'base64')).toHaveLength(64);
    expect(await verifyPassword('correct horse battery staple', stored)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', stored)).toBe(false);
    expect(await verifyPassword('correct horse battery staple', 'plain')).toBe(false);
    // A fresh salt each time.
    expect(await hashPassword('correct horse battery staple')).not.toBe(stored);
  });
});
