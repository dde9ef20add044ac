/** Schemas of the signing keys (docs/signatures.md). */
import { Type } from '@sinclair/typebox';

export const PublicJwkSchema = Type.Object({
  kty: Type.Literal('OKP'),
  crv: Type.Literal('Ed25519'),
  alg: Type.Literal('EdDSA'),
  use: Type.Literal('sig'),
  kid: Type.String({ description: 'RFC 7638 JWK thumbprint' }),
  x: Type.String({ description: 'the raw 32-byte public key, unpadded base64url' }),
});

export const JwkSet = Type.Object(
  { keys: Type.Array(PublicJwkSchema, { description: 'every key, current and retired, oldest first; retired keys stay published permanently' }) },
  { $id: 'SigningJwkSet' },
);

export const SigningKeyView = Type.Object({
  kid: Type.String(),
  x: Type.String(),
  status: Type.Union([Type.Literal('current'), Type.Literal('retired')]),
  created_at: Type.String({ format: 'date-time' }),
  created_by: Type.String({ description: '`platform` for the first key, else who rotated' }),
  retired_at: Type.Optional(Type.String({ format: 'date-time' })),
  retired_by: Type.Optional(Type.String()),
});

export const ListSigningKeysResponse = Type.Object({ signing_keys: Type.Array(SigningKeyView) });
export const RotateResponse = Type.Object({ current: SigningKeyView, retired: SigningKeyView });
