/** A unique-index or primary-key violation, in either engine (PostgreSQL 23505, SQLite's constraint codes). */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  return (
    err?.code === '23505' ||
    err?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    err?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    /UNIQUE constraint failed|duplicate key value/.test(String(err?.message))
  );
}
