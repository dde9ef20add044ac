import pg from 'pg';

// bigint columns (audit seq) come back as JS numbers; they stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export async function openPostgresPool(url: string, schema?: string): Promise<pg.Pool> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  if (schema) {
    if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error('invalid schema name');
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  }
  // Fail at start-up, not on the first request, when the server is unreachable.
  await pool.query('SELECT 1');
  return pool;
}
