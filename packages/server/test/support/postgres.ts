import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";

/**
 * A new, empty database on the run's PostgreSQL server (see `postgres-global-setup.ts`),
 * as a `postgres://` URL. Throws, failing the test, when the run has no PostgreSQL.
 */
export async function freshDatabase(): Promise<string> {
  const postgres = inject("postgres");
  if ("unavailable" in postgres) throw new Error(`This test needs PostgreSQL: ${postgres.unavailable}`);
  const name = `t_${randomBytes(8).toString("hex")}`;
  const client = new pg.Client({ connectionString: postgres.adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return postgres.adminUrl.replace(/\/postgres\?/, `/${name}?`);
}

/**
 * Whether this run puts test servers on PostgreSQL: the `postgres` project of the server's
 * vitest config sets `BROWSER_SERVICE_TEST_DATABASE=postgres` and runs the API's test
 * files again, so that they hold on both databases.
 */
export const ON_POSTGRES = process.env.BROWSER_SERVICE_TEST_DATABASE === "postgres";

// A data directory's database: a restart on the same data directory finds the same
// database, as it finds the same SQLite file.
const databaseOfDataDir = new Map<string, Promise<string>>();

/** Under {@link ON_POSTGRES}, the database of the test server on `dataDir` (fresh at its first start); else `undefined`. */
export async function testDatabaseFor(dataDir: string): Promise<string | undefined> {
  if (!ON_POSTGRES) return undefined;
  let database = databaseOfDataDir.get(dataDir);
  if (database === undefined) databaseOfDataDir.set(dataDir, (database = freshDatabase()));
  return database;
}
