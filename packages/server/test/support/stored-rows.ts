import pg from "pg";
import { dataDirLayout } from "../../src/storage/data-dir.js";
import { SqliteDatabase } from "../../src/storage/database.js";
import type { SqlValue } from "../../src/storage/sql-values.js";

/**
 * The rows a query (`?` placeholders) finds in a test server's database, whichever it
 * ran on: the data directory's SQLite file (once the server stopped: it holds the file
 * exclusively), or its PostgreSQL `database` (at any time). For records no operation
 * reads back, and for changes made behind a server's back (another node's, say).
 */
export async function storedRows<T>(server: { dataDir: string; database: string | undefined }, sql: string, params: SqlValue[] = []): Promise<T[]> {
  if (server.database === undefined) {
    const db = SqliteDatabase.open(dataDirLayout(server.dataDir).databaseFile);
    try {
      return db.all<T>(sql, params);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: server.database });
  await client.connect();
  try {
    let n = 0;
    return (
      await client.query(
        sql.replace(/\?/g, () => `$${++n}`),
        params,
      )
    ).rows as T[];
  } finally {
    await client.end();
  }
}
