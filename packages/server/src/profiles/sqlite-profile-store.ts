import { lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { NameConflictError, ProfileInUseError } from "../http/api-errors.js";
import { fsyncDirectory, isProfileStateFileName, PRIVATE_FILE_MODE, profileStateFileName } from "../storage/data-dir.js";
import { isStorableText, isUniqueViolation, type SqliteDatabase } from "../storage/database.js";
import type { Synchronous } from "../storage/unit-of-work-gate.js";
import {
  fromStoredProfile,
  PROFILE_COLUMNS,
  type Profile,
  type ProfilePage,
  type ProfileSaveError,
  type ProfileStore,
  type StoredProfile,
} from "./profile-store.js";

const nameTaken = (name: string | null) => new NameConflictError(`A profile named "${name}" already exists in this project; choose another name.`);

/**
 * {@link ProfileStore} in SQLite, each saved state a sealed file of the profiles folder
 * that the row names: a save writes and syncs a new file, points the row at it in one
 * commit, then removes the old one.
 */
export class SqliteProfileStore implements Synchronous<ProfileStore> {
  readonly #db: SqliteDatabase;
  readonly #dir: string;

  constructor(db: SqliteDatabase, profilesDir: string) {
    this.#db = db;
    this.#dir = profilesDir;
  }

  insert(projectId: string, profile: Profile): void {
    try {
      this.#db.transaction(() =>
        this.#db.run("INSERT INTO profiles (id, project_id, name, created_at, updated_at, last_used_at, size_bytes) VALUES (?, ?, ?, ?, ?, ?, ?)", [
          profile.id,
          projectId,
          profile.name,
          profile.created_at,
          profile.updated_at,
          profile.last_used_at,
          profile.size_bytes,
        ]),
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(profile.name);
      throw error;
    }
  }

  get(projectId: string, idOrName: string): Profile | undefined {
    if (!isStorableText(idOrName)) return undefined;
    const row =
      this.#db.get<StoredProfile>(`SELECT ${PROFILE_COLUMNS} FROM profiles WHERE project_id = ? AND id = ?`, [projectId, idOrName]) ??
      this.#db.get<StoredProfile>(`SELECT ${PROFILE_COLUMNS} FROM profiles WHERE project_id = ? AND name = ?`, [projectId, idOrName]);
    return row === undefined ? undefined : fromStoredProfile(row);
  }

  list(projectId: string, { offset, limit, name, query }: ProfilePage): { items: Profile[]; hasMore: boolean } {
    if ((name !== undefined && !isStorableText(name)) || (query !== undefined && !isStorableText(query))) return { items: [], hasMore: false };
    const where = ["project_id = ?"];
    const params: (string | number)[] = [projectId];
    if (name !== undefined) {
      where.push("name = ?");
      params.push(name);
    }
    if (query !== undefined) {
      // instr, not LIKE: the text is matched as written, `%` and `_` included.
      where.push("(instr(lower(name), lower(?)) > 0 OR id = ?)");
      params.push(query, query);
    }
    const rows = this.#db.all<StoredProfile>(`SELECT ${PROFILE_COLUMNS} FROM profiles WHERE ${where.join(" AND ")} ORDER BY seq LIMIT ? OFFSET ?`, [
      ...params,
      limit + 1,
      offset,
    ]);
    return { items: rows.slice(0, limit).map(fromStoredProfile), hasMore: rows.length > limit };
  }

  rename(projectId: string, id: string, name: string): Profile | undefined {
    try {
      return this.#db.transaction(() => {
        const changed = this.#db.run("UPDATE profiles SET name = ?, updated_at = ? WHERE project_id = ? AND id = ?", [
          name,
          new Date().toISOString(),
          projectId,
          id,
        ]);
        const row = changed === 0 ? undefined : this.#db.get<StoredProfile>(`SELECT ${PROFILE_COLUMNS} FROM profiles WHERE id = ?`, [id]);
        return row === undefined ? undefined : fromStoredProfile(row);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(name);
      throw error;
    }
  }

  delete(projectId: string, id: string): boolean {
    const file = this.#db.transaction(() => {
      const row = this.#db.get<{ snapshot: string | null; name: string | null }>("SELECT snapshot, name FROM profiles WHERE project_id = ? AND id = ?", [
        projectId,
        id,
      ]);
      if (row === undefined) return undefined;
      const saver = this.#db.get<{ id: string }>("SELECT id FROM browsers WHERE profile_id = ? AND profile_save = 1 AND status <> 'crashed'", [id]);
      if (saver !== undefined) throw new ProfileInUseError(row.name ?? id, saver.id, "delete");
      this.#db.run("DELETE FROM profiles WHERE id = ?", [id]);
      return { snapshot: row.snapshot };
    });
    if (file === undefined) return false;
    if (file.snapshot !== null) rmSync(join(this.#dir, file.snapshot), { force: true });
    return true;
  }

  readSnapshot(id: string): Buffer | undefined {
    const file = this.#db.get<{ snapshot: string | null }>("SELECT snapshot FROM profiles WHERE id = ?", [id])?.snapshot;
    return file === null || file === undefined ? undefined : readFileSync(join(this.#dir, file));
  }

  saveSnapshot(id: string, sealed: Buffer, sizeBytes: number): boolean {
    const name = profileStateFileName(id);
    const path = join(this.#dir, name);
    writeFileSync(path, sealed, { mode: PRIVATE_FILE_MODE, flag: "wx", flush: true });
    let previous: string | null | undefined;
    try {
      fsyncDirectory(this.#dir);
      previous = this.#db.transaction(() => {
        const row = this.#db.get<{ snapshot: string | null }>("SELECT snapshot FROM profiles WHERE id = ?", [id]);
        if (row === undefined) return undefined;
        this.#db.run(
          "UPDATE profiles SET snapshot = ?, size_bytes = ?, updated_at = ?, save_error_code = NULL, save_error_message = NULL, save_error_browser_id = NULL, save_error_at = NULL WHERE id = ?",
          [name, sizeBytes, new Date().toISOString(), id],
        );
        return row.snapshot;
      });
    } catch (error) {
      rmSync(path, { force: true });
      throw error;
    }
    if (previous === undefined) {
      rmSync(path, { force: true });
      return false;
    }
    if (previous !== null) rmSync(join(this.#dir, previous), { force: true });
    return true;
  }

  recordSaveError(id: string, error: ProfileSaveError): void {
    this.#db.transaction(() =>
      this.#db.run("UPDATE profiles SET save_error_code = ?, save_error_message = ?, save_error_browser_id = ?, save_error_at = ? WHERE id = ?", [
        error.code,
        error.message,
        error.browser_id,
        error.at,
        id,
      ]),
    );
  }

  resealAll(reseal: (profile: { id: string; project_id: string }, sealed: Buffer) => Buffer): number {
    const rows = this.#db.all<{ id: string; project_id: string; snapshot: string; size_bytes: number }>(
      "SELECT id, project_id, snapshot, size_bytes FROM profiles WHERE snapshot IS NOT NULL",
    );
    for (const row of rows) {
      const sealed = readFileSync(join(this.#dir, row.snapshot));
      const again = reseal(row, sealed);
      if (!again.equals(sealed)) this.saveSnapshot(row.id, again, row.size_bytes);
    }
    return rows.length;
  }

  /** Only files named as the server names saved state are candidates: anything else in the folder is not the server's to delete. */
  removeUnreferencedSnapshots(): number {
    const known = new Set(this.#db.all<{ snapshot: string }>("SELECT snapshot FROM profiles WHERE snapshot IS NOT NULL").map((row) => row.snapshot));
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
