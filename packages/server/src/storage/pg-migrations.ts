import { fileURLToPath } from "node:url";
import { type Migration, MigrationError, pendingMigrations, readMigrations } from "./migrations.js";
import type { PgDatabase } from "./pg-database.js";

/** The PostgreSQL migrations: `migrations/postgres/` (the same relative place from `src/` and `dist/`). */
export const PG_MIGRATIONS_DIR = fileURLToPath(new URL("../../migrations/postgres/", import.meta.url));

/**
 * Applies every PostgreSQL migration the database has not recorded yet, all in ONE
 * transaction with their rows in `schema_migrations` (PostgreSQL's DDL is
 * transactional), inside a unit of work: servers starting together on one database wait
 * for each other, and the first one migrates. Returns the versions applied now.
 */
export async function applyPgMigrations(db: PgDatabase, migrations: Migration[] = readMigrations(PG_MIGRATIONS_DIR)): Promise<number[]> {
  return db.unitOfWork(async () => {
    await db.run("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
    const done: number[] = [];
    for (const migration of pendingMigrations(await db.all<{ version: number }>("SELECT version FROM schema_migrations"), migrations)) {
      try {
        await db.run(migration.sql);
        await db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
          migration.version,
          migration.name,
          new Date().toISOString(),
        ]);
      } catch (error) {
        throw new MigrationError(`Migration ${migration.version}_${migration.name} failed: ${(error as Error).message}`, error);
      }
      done.push(migration.version);
    }
    return done;
  });
}
