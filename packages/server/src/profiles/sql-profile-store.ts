import { lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { NameConflictError, ProfileInUseError } from "../http/api-errors.js";
import { fsyncDirectory, isProfileStateFileName, PRIVATE_FILE_MODE, profileStateFileName } from "../storage/data-dir.js";
import { isStorableText } from "../storage/database.js";
import { isUniqueViolation } from "../storage/program-runners.js";
import { allRows, getRow, inTransaction, lockRows, type Programs, runSql, type SqlProgram, type SqlStoreContext } from "../storage/sql-program.js";
import { joinSql, rawSql, type Sql, sql, sqlContains, sqlFor } from "../storage/sql-text.js";
import {
  fromStoredProfile,
  PROFILE_COLUMNS,
  type Profile,
  type ProfilePage,
  type ProfileSaveError,
  type ProfileStore,
  type StoredProfile,
} from "./profile-store.js";

const COLUMNS = rawSql(PROFILE_COLUMNS);

// The file of the profiles folder that holds a profile's saved state (SQLite). In
// PostgreSQL the state is a row of profile_snapshots, which its profile's delete drops.
const SNAPSHOT = sqlFor({ sqlite: sql`snapshot`, postgres: sql`NULL` });

type Reseal = (profile: { id: string; project_id: string }, sealed: Buffer) => Buffer;

const nameTaken = (name: string | null) => new NameConflictError(`A profile named "${name}" already exists in this project; choose another name.`);

/**
 * {@link ProfileStore}'s rules, once for both databases. Where a saved state lives is
 * what differs. In SQLite each is a sealed file of the profiles folder that the row
 * names: a save writes and syncs a new file, points the row at it in one commit, then
 * removes the old one. In PostgreSQL each is a row of `profile_snapshots`, replaced in
 * one commit, so every node reads the same state (a node's folder is its own) and a crash
 * keeps the previous one whole: only SQLite's store is given the profiles folder.
 */
export class SqlProfileStore implements Programs<ProfileStore> {
  // The profiles folder, where SQLite's saved states are; `undefined` in PostgreSQL.
  readonly #dir: string | undefined;

  constructor(context: SqlStoreContext & { dialect: "sqlite" }, profilesDir: string);
  constructor(context: SqlStoreContext & { dialect: "postgres" });
  constructor(_context: SqlStoreContext, profilesDir?: string) {
    this.#dir = profilesDir;
  }

  *insert(projectId: string, profile: Profile): SqlProgram<void> {
    try {
      yield* inTransaction(() =>
        runSql(
          sql`INSERT INTO profiles (id, project_id, name, created_at, updated_at, last_used_at, size_bytes) VALUES (${profile.id}, ${projectId}, ${profile.name}, ${profile.created_at}, ${profile.updated_at}, ${profile.last_used_at}, ${profile.size_bytes})`,
        ),
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(profile.name);
      throw error;
    }
  }

  *get(projectId: string, idOrName: string): SqlProgram<Profile | undefined> {
    // No id or name holds a NUL, which SQLite's binding would cut the text at.
    if (!isStorableText(idOrName)) return undefined;
    const row =
      (yield* getRow<StoredProfile>(sql`SELECT ${COLUMNS} FROM profiles WHERE project_id = ${projectId} AND id = ${idOrName}`)) ??
      (yield* getRow<StoredProfile>(sql`SELECT ${COLUMNS} FROM profiles WHERE project_id = ${projectId} AND name = ${idOrName}`));
    return row === undefined ? undefined : fromStoredProfile(row);
  }

  *list(projectId: string, { offset, limit, name, query }: ProfilePage): SqlProgram<{ items: Profile[]; hasMore: boolean }> {
    if ((name !== undefined && !isStorableText(name)) || (query !== undefined && !isStorableText(query))) return { items: [], hasMore: false };
    const where: Sql[] = [sql`project_id = ${projectId}`];
    if (name !== undefined) where.push(sql`name = ${name}`);
    if (query !== undefined) {
      where.push(sql`(${sqlContains(rawSql("name"), query)} OR id = ${query})`);
    }
    const rows = yield* allRows<StoredProfile>(
      sql`SELECT ${COLUMNS} FROM profiles WHERE ${joinSql(where, " AND ")} ORDER BY seq LIMIT ${limit + 1} OFFSET ${offset}`,
    );
    return { items: rows.slice(0, limit).map(fromStoredProfile), hasMore: rows.length > limit };
  }

  *rename(projectId: string, id: string, name: string): SqlProgram<Profile | undefined> {
    try {
      // Every row read: SQLite's statement with RETURNING would stay in progress (and its
      // transaction uncommittable) after its first row.
      const [row] = yield* inTransaction(() =>
        allRows<StoredProfile>(
          sql`UPDATE profiles SET name = ${name}, updated_at = ${new Date().toISOString()} WHERE project_id = ${projectId} AND id = ${id} RETURNING ${COLUMNS}`,
        ),
      );
      return row === undefined ? undefined : fromStoredProfile(row);
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(name);
      throw error;
    }
  }

  *delete(projectId: string, id: string): SqlProgram<boolean> {
    const deleted = yield* inTransaction(() => this.#delete(projectId, id));
    if (deleted === undefined) return false;
    // Once the delete is committed: a crash before this leaves a file no row names, which
    // removeUnreferencedSnapshots removes.
    if (deleted.snapshot !== null && this.#dir !== undefined) rmSync(join(this.#dir, deleted.snapshot), { force: true });
    return true;
  }

  *#delete(projectId: string, id: string): SqlProgram<{ snapshot: string | null } | undefined> {
    yield* lockRows(sql`SELECT 1 FROM profiles WHERE project_id = ${projectId} AND id = ${id} FOR UPDATE`);
    const row = yield* getRow<{ snapshot: string | null; name: string | null }>(
      sql`SELECT ${SNAPSHOT} AS snapshot, name FROM profiles WHERE project_id = ${projectId} AND id = ${id}`,
    );
    if (row === undefined) return undefined;
    const saver = yield* getRow<{ id: string }>(sql`SELECT id FROM browsers WHERE profile_id = ${id} AND profile_save = 1 AND status <> 'crashed'`);
    if (saver !== undefined) throw new ProfileInUseError(row.name ?? id, saver.id, "delete");
    yield* runSql(sql`DELETE FROM profiles WHERE id = ${id}`);
    return { snapshot: row.snapshot };
  }

  *readSnapshot(id: string): SqlProgram<Buffer | undefined> {
    if (this.#dir === undefined) return (yield* getRow<{ sealed: Buffer }>(sql`SELECT sealed FROM profile_snapshots WHERE profile_id = ${id}`))?.sealed;
    const file = (yield* getRow<{ snapshot: string | null }>(sql`SELECT snapshot FROM profiles WHERE id = ${id}`))?.snapshot;
    return file === null || file === undefined ? undefined : readFileSync(join(this.#dir, file));
  }

  *saveSnapshot(id: string, sealed: Buffer, sizeBytes: number): SqlProgram<boolean> {
    if (this.#dir === undefined) return yield* inTransaction(() => this.#saveRow(id, sealed, sizeBytes));
    return yield* this.#saveFile(this.#dir, id, sealed, sizeBytes);
  }

  // PostgreSQL: the profile's row and its state's row, in one commit.
  *#saveRow(id: string, sealed: Buffer, sizeBytes: number): SqlProgram<boolean> {
    if ((yield* this.#markSaved(id, sizeBytes)) === 0) return false;
    yield* runSql(
      sql`INSERT INTO profile_snapshots (profile_id, sealed) VALUES (${id}, ${sealed}) ON CONFLICT (profile_id) DO UPDATE SET sealed = excluded.sealed`,
    );
    return true;
  }

  // SQLite: a new file, written and synced before the commit that points the row at it.
  *#saveFile(dir: string, id: string, sealed: Buffer, sizeBytes: number): SqlProgram<boolean> {
    const name = profileStateFileName(id);
    const path = join(dir, name);
    writeFileSync(path, sealed, { mode: PRIVATE_FILE_MODE, flag: "wx", flush: true });
    let previous: string | null | undefined;
    try {
      fsyncDirectory(dir);
      previous = yield* inTransaction(() => this.#pointAt(id, name, sizeBytes));
    } catch (error) {
      rmSync(path, { force: true });
      throw error;
    }
    if (previous === undefined) {
      rmSync(path, { force: true });
      return false;
    }
    if (previous !== null) rmSync(join(dir, previous), { force: true });
    return true;
  }

  /** Points profile `id`'s row at the state file `name`; the file it named before, or `undefined` when the profile is gone. */
  *#pointAt(id: string, name: string, sizeBytes: number): SqlProgram<string | null | undefined> {
    const row = yield* getRow<{ snapshot: string | null }>(sql`SELECT snapshot FROM profiles WHERE id = ${id}`);
    if (row === undefined) return undefined;
    yield* this.#markSaved(id, sizeBytes, sql`snapshot = ${name}, `);
    return row.snapshot;
  }

  /** Records a save into profile `id` (its size, and `file`: SQLite's new state file) and clears its save error; the rows changed. */
  *#markSaved(id: string, sizeBytes: number, file: Sql = sql``): SqlProgram<number> {
    return yield* runSql(
      sql`UPDATE profiles SET ${file}size_bytes = ${sizeBytes}, updated_at = ${new Date().toISOString()}, save_error_code = NULL, save_error_message = NULL, save_error_browser_id = NULL, save_error_at = NULL WHERE id = ${id}`,
    );
  }

  *recordSaveError(id: string, error: ProfileSaveError): SqlProgram<void> {
    yield* inTransaction(() =>
      runSql(
        sql`UPDATE profiles SET save_error_code = ${error.code}, save_error_message = ${error.message}, save_error_browser_id = ${error.browser_id}, save_error_at = ${error.at} WHERE id = ${id}`,
      ),
    );
  }

  *resealAll(reseal: Reseal): SqlProgram<number> {
    return this.#dir === undefined ? yield* this.#resealRows(reseal) : yield* this.#resealFiles(this.#dir, reseal);
  }

  // PostgreSQL: each state's row replaced in a transaction of its own.
  *#resealRows(reseal: Reseal): SqlProgram<number> {
    const profiles = yield* allRows<{ id: string; project_id: string }>(
      sql`SELECT p.id, p.project_id FROM profile_snapshots s JOIN profiles p ON p.id = s.profile_id`,
    );
    for (const profile of profiles) {
      // One at a time: a snapshot may be large, and each is replaced all or nothing.
      yield* inTransaction(() => this.#resealRow(profile, reseal));
    }
    return profiles.length;
  }

  *#resealRow(profile: { id: string; project_id: string }, reseal: Reseal): SqlProgram<void> {
    yield* lockRows(sql`SELECT 1 FROM profile_snapshots WHERE profile_id = ${profile.id} FOR UPDATE`);
    const row = yield* getRow<{ sealed: Buffer }>(sql`SELECT sealed FROM profile_snapshots WHERE profile_id = ${profile.id}`);
    if (row === undefined) return;
    const again = reseal(profile, row.sealed);
    if (!again.equals(row.sealed)) yield* runSql(sql`UPDATE profile_snapshots SET sealed = ${again} WHERE profile_id = ${profile.id}`);
  }

  // SQLite: each state saved again as a save does (a new file, then the row pointed at it).
  *#resealFiles(dir: string, reseal: Reseal): SqlProgram<number> {
    const rows = yield* allRows<{ id: string; project_id: string; snapshot: string; size_bytes: number }>(
      sql`SELECT id, project_id, snapshot, size_bytes FROM profiles WHERE snapshot IS NOT NULL`,
    );
    for (const row of rows) {
      const sealed = readFileSync(join(dir, row.snapshot));
      const again = reseal(row, sealed);
      if (!again.equals(sealed)) yield* this.#saveFile(dir, row.id, again, row.size_bytes);
    }
    return rows.length;
  }

  /** Only files named as the server names saved state are candidates: anything else in the folder is not the server's to delete. */
  *removeUnreferencedSnapshots(): SqlProgram<number> {
    // In PostgreSQL saved state lives in the database, dropped with its profile: no file can be left over.
    if (this.#dir === undefined) return 0;
    const known = new Set((yield* allRows<{ snapshot: string }>(sql`SELECT snapshot FROM profiles WHERE snapshot IS NOT NULL`)).map((row) => row.snapshot));
    let removed = 0;
    for (const file of readdirSync(this.#dir)) {
      const path = join(this.#dir, file);
      if (!known.has(file) && isProfileStateFileName(file) && lstatSync(path).isFile()) {
        rmSync(path, { force: true });
        removed++;
      }
    }
    return removed;
  }
}
