import Database from 'better-sqlite3';

export function openSqlite(file: string): Database.Database {
  const db = new Database(file);
  // WAL + full sync: a committed write survives a crash of the process or the machine.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  return db;
}
