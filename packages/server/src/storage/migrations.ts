import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SqliteDatabase } from "./database.js";
import type { Dialect } from "./sql-text.js";

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

/** One step of the schema's history, in one dialect's form (empty when the step has nothing to do there). */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The history's steps in `dialect`'s form, in order: `NNNN_name.sql` for both databases,
 * or `NNNN_name.sqlite.sql` and `NNNN_name.postgres.sql` where they differ (migrations/README.md).
 * Numbering must run 1, 2, 3... without gaps, one name per number.
 */
export function readMigrations(dir: string = MIGRATIONS_DIR, dialect: Dialect = "sqlite"): Migration[] {
  const steps = new Map<number, { name: string; shared?: string; forms: Partial<Record<Dialect, string>> }>();
  for (const file of readdirSync(dir)
    .filter((each) => each.endsWith(".sql"))
    .sort()) {
    const match = /^(\d{4})_([a-z0-9_]+?)(?:\.(sqlite|postgres))?\.sql$/.exec(file);
    if (!match) throw new MigrationError(`Migration file ${file} is not named NNNN_name.sql, NNNN_name.sqlite.sql or NNNN_name.postgres.sql.`);
    const version = Number(match[1]);
    const name = match[2] as string;
    const step = steps.get(version) ?? { name, forms: {} };
    if (step.name !== name) throw new MigrationError(`Migration ${version} has two names: ${step.name} and ${name}.`);
    const text = readFileSync(join(dir, file), "utf8");
    if (match[3] === undefined) step.shared = text;
    else step.forms[match[3] as Dialect] = text;
    if (step.shared !== undefined && Object.keys(step.forms).length > 0) {
      throw new MigrationError(`Migration ${version}_${name} has both a shared form and a dialect's form.`);
    }
    steps.set(version, step);
  }
  const versions = [...steps.keys()];
  versions.forEach((version, index) => {
    if (version !== index + 1) {
      throw new MigrationError(`Migration ${version}_${steps.get(version)?.name} is out of sequence; expected version ${index + 1}.`);
    }
  });
  return versions.map((version) => {
    const step = steps.get(version) as { name: string; shared?: string; forms: Partial<Record<Dialect, string>> };
    return { version, name: step.name, sql: step.shared ?? step.forms[dialect] ?? "" };
  });
}

/**
 * The rows `schema_migrations` should hold when `recorded` came from the two separate
 * histories each database had before they were merged into one (the same steps under
 * other numbers, known by their names), or `undefined` when `recorded` is already in this
 * history's numbers, or reaches past its end (a newer server's database, which
 * {@link pendingMigrations} refuses). A step this history does not know, or one recorded
 * twice, is refused ({@link MigrationError}): taken for another, it would leave the
 * schema without what the server expects.
 */
export function adoptedHistory<R extends { version: number; name: string }>(recorded: readonly R[], migrations: readonly Migration[]): R[] | undefined {
  if (recorded.every((row) => migrations[row.version - 1]?.name === row.name)) return undefined;
  if (recorded.some((row) => row.version > migrations.length)) return undefined;
  const versionOf = new Map(migrations.map((migration) => [migration.name, migration.version]));
  const seen = new Set<string>();
  for (const row of recorded) {
    if (!versionOf.has(row.name)) {
      throw new MigrationError(
        `The database records step ${row.version} "${row.name}", which is not in this server's history: another build made it; use that build.`,
      );
    }
    if (seen.has(row.name))
      throw new MigrationError(`The database records step "${row.name}" twice; its schema_migrations table is not one this server wrote.`);
    seen.add(row.name);
  }
  return recorded.map((row) => ({ ...row, version: versionOf.get(row.name) as number }));
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
  const recorded = db.all<{ version: number; name: string; applied_at: string }>("SELECT version, name, applied_at FROM schema_migrations ORDER BY version");
  const adopted = adoptedHistory(recorded, migrations);
  if (adopted !== undefined) {
    db.transaction(() => {
      db.run("DELETE FROM schema_migrations");
      for (const row of adopted) db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [row.version, row.name, row.applied_at]);
    });
  }
  const done: number[] = [];
  for (const migration of pendingMigrations(adopted ?? recorded, migrations)) {
    try {
      db.transaction(() => {
        if (migration.sql !== "") db.exec(migration.sql);
        db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [migration.version, migration.name, new Date().toISOString()]);
      });
    } catch (error) {
      throw new MigrationError(`Migration ${migration.version}_${migration.name} failed: ${(error as Error).message}`, error);
    }
    done.push(migration.version);
  }
  return done;
}
