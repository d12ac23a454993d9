import { adoptedHistory, MIGRATIONS_DIR, type Migration, MigrationError, pendingMigrations, readMigrations } from "./migrations.js";
import type { PgDatabase } from "./pg-database.js";

/**
 * Applies every migration the database has not recorded yet, all in ONE
 * transaction with their rows in `schema_migrations` (PostgreSQL's DDL is
 * transactional), inside a unit of work: servers starting together on one database wait
 * for each other, and the first one migrates. Returns the versions applied now.
 */
export async function applyPgMigrations(db: PgDatabase, migrations: Migration[] = readMigrations(MIGRATIONS_DIR, "postgres")): Promise<number[]> {
  return db.unitOfWork(async () => {
    await db.run("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
    const recorded = await db.all<{ version: number; name: string; applied_at: string }>(
      "SELECT version, name, applied_at FROM schema_migrations ORDER BY version",
    );
    const adopted = adoptedHistory(recorded, migrations);
    if (adopted !== undefined) {
      await db.run("DELETE FROM schema_migrations");
      for (const row of adopted) {
        await db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [row.version, row.name, row.applied_at]);
      }
    }
    const done: number[] = [];
    for (const migration of pendingMigrations(adopted ?? recorded, migrations)) {
      try {
        if (migration.sql !== "") await db.run(migration.sql);
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
