import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SqliteDatabase } from "./database.js";

/** The package's `migrations/` folder (the same relative place from `src/` and `dist/`). */
export const MIGRATIONS_DIR = fileURLToPath(new URL("../../migrations/", import.meta.url));

/** The schema cannot be brought up to date. */
export class MigrationError extends Error {
  /** Stable code of the failure. */
  readonly code = "migration_failed";

  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "MigrationError";
  }
}

/** One migration file: `NNNN_name.sql`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The migrations in `dir`, in order; numbering must run 1, 2, 3... without gaps. */
export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(dir)
    .filter((file) => file.endsWith(".sql"))
    .sort()
    .map((file) => {
      const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(file);
      if (!match) throw new MigrationError(`Migration file ${file} is not named NNNN_name.sql.`);
      return { version: Number(match[1]), name: match[2] as string, sql: readFileSync(join(dir, file), "utf8") };
    });
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new MigrationError(`Migration ${migration.version}_${migration.name} is out of sequence; expected version ${index + 1}.`);
    }
  });
  return migrations;
}

/**
 * The migrations not in `applied` (the rows of `schema_migrations`), in order; a database
 * at a version newer than `migrations` know is refused ({@link MigrationError}).
 */
export function pendingMigrations(applied: readonly { version: number }[], migrations: readonly Migration[]): Migration[] {
  const versions = new Set(applied.map((row) => row.version));
  const newest = Math.max(0, ...versions);
  if (newest > migrations.length) {
    throw new MigrationError(`The database is at schema version ${newest}, newer than this server knows (${migrations.length}); use a newer server.`);
  }
  return migrations.filter((migration) => !versions.has(migration.version));
}

/**
 * Applies every migration the database has not recorded yet, each inside its own
 * transaction together with its row in `schema_migrations`, so a crash leaves the schema
 * at a recorded version. Returns the versions applied now.
 */
export function applyMigrations(db: SqliteDatabase, migrations: Migration[] = readMigrations()): number[] {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
  const done: number[] = [];
  for (const migration of pendingMigrations(db.all<{ version: number }>("SELECT version FROM schema_migrations"), migrations)) {
    try {
      db.transaction(() => {
        db.exec(migration.sql);
        db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [migration.version, migration.name, new Date().toISOString()]);
      });
    } catch (error) {
      throw new MigrationError(`Migration ${migration.version}_${migration.name} failed: ${(error as Error).message}`, error);
    }
    done.push(migration.version);
  }
  return done;
}
