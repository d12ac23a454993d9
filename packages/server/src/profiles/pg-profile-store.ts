import { NameConflictError, ProfileInUseError } from "../http/api-errors.js";
import { isStorableText } from "../storage/database.js";
import { isPgUniqueViolation, type PgDatabase, type PgValue } from "../storage/pg-database.js";
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

const fromStored = fromStoredProfile;

/**
 * {@link ProfileStore} in PostgreSQL: each saved state is a row of `profile_snapshots`,
 * replaced in one commit, so every node reads the same state and a crash keeps the
 * previous one whole.
 */
export class PgProfileStore implements ProfileStore {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  async insert(projectId: string, profile: Profile): Promise<void> {
    try {
      await this.#db.run("INSERT INTO profiles (id, project_id, name, created_at, updated_at, last_used_at, size_bytes) VALUES ($1, $2, $3, $4, $5, $6, $7)", [
        profile.id,
        projectId,
        profile.name,
        profile.created_at,
        profile.updated_at,
        profile.last_used_at,
        profile.size_bytes,
      ]);
    } catch (error) {
      if (isPgUniqueViolation(error)) throw nameTaken(profile.name);
      throw error;
    }
  }

  async get(projectId: string, idOrName: string): Promise<Profile | undefined> {
    if (!isStorableText(idOrName)) return undefined;
    const row =
      (await this.#db.get<StoredProfile>(`SELECT ${PROFILE_COLUMNS} FROM profiles WHERE project_id = $1 AND id = $2`, [projectId, idOrName])) ??
      (await this.#db.get<StoredProfile>(`SELECT ${PROFILE_COLUMNS} FROM profiles WHERE project_id = $1 AND name = $2`, [projectId, idOrName]));
    return row === undefined ? undefined : fromStored(row);
  }

  async list(projectId: string, { offset, limit, name, query }: ProfilePage): Promise<{ items: Profile[]; hasMore: boolean }> {
    if ((name !== undefined && !isStorableText(name)) || (query !== undefined && !isStorableText(query))) return { items: [], hasMore: false };
    const where = ["project_id = $1"];
    const params: PgValue[] = [projectId];
    if (name !== undefined) {
      params.push(name);
      where.push(`name = $${params.length}`);
    }
    if (query !== undefined) {
      params.push(query);
      // strpos, not LIKE: the text is matched as written, `%` and `_` included.
      where.push(`(strpos(lower(name), lower($${params.length})) > 0 OR id = $${params.length})`);
    }
    params.push(limit + 1, offset);
    const rows = await this.#db.all<StoredProfile>(
      `SELECT ${PROFILE_COLUMNS} FROM profiles WHERE ${where.join(" AND ")} ORDER BY seq LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return { items: rows.slice(0, limit).map(fromStored), hasMore: rows.length > limit };
  }

  async rename(projectId: string, id: string, name: string): Promise<Profile | undefined> {
    try {
      const row = await this.#db.get<StoredProfile>(
        `UPDATE profiles SET name = $1, updated_at = $2 WHERE project_id = $3 AND id = $4 RETURNING ${PROFILE_COLUMNS}`,
        [name, new Date().toISOString(), projectId, id],
      );
      return row === undefined ? undefined : fromStored(row);
    } catch (error) {
      if (isPgUniqueViolation(error)) throw nameTaken(name);
      throw error;
    }
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    return this.#db.transaction(async () => {
      const row = await this.#db.get<{ name: string | null }>("SELECT name FROM profiles WHERE project_id = $1 AND id = $2 FOR UPDATE", [projectId, id]);
      if (row === undefined) return false;
      const saver = await this.#db.get<{ id: string }>("SELECT id FROM browsers WHERE profile_id = $1 AND profile_save = 1 AND status <> 'crashed'", [id]);
      if (saver !== undefined) throw new ProfileInUseError(row.name ?? id, saver.id, "delete");
      await this.#db.run("DELETE FROM profiles WHERE id = $1", [id]);
      return true;
    });
  }

  async readSnapshot(id: string): Promise<Buffer | undefined> {
    return (await this.#db.get<{ sealed: Buffer }>("SELECT sealed FROM profile_snapshots WHERE profile_id = $1", [id]))?.sealed;
  }

  async saveSnapshot(id: string, sealed: Buffer, sizeBytes: number): Promise<boolean> {
    return this.#db.transaction(async () => {
      const changed = await this.#db.run(
        "UPDATE profiles SET size_bytes = $1, updated_at = $2, save_error_code = NULL, save_error_message = NULL, save_error_browser_id = NULL, save_error_at = NULL WHERE id = $3",
        [sizeBytes, new Date().toISOString(), id],
      );
      if (changed === 0) return false;
      await this.#db.run("INSERT INTO profile_snapshots (profile_id, sealed) VALUES ($1, $2) ON CONFLICT (profile_id) DO UPDATE SET sealed = excluded.sealed", [
        id,
        sealed,
      ]);
      return true;
    });
  }

  async recordSaveError(id: string, error: ProfileSaveError): Promise<void> {
    await this.#db.run("UPDATE profiles SET save_error_code = $1, save_error_message = $2, save_error_browser_id = $3, save_error_at = $4 WHERE id = $5", [
      error.code,
      error.message,
      error.browser_id,
      error.at,
      id,
    ]);
  }

  async resealAll(reseal: (profile: { id: string; project_id: string }, sealed: Buffer) => Buffer): Promise<number> {
    const ids = await this.#db.all<{ id: string; project_id: string }>(
      "SELECT p.id, p.project_id FROM profile_snapshots s JOIN profiles p ON p.id = s.profile_id",
    );
    for (const profile of ids) {
      const id = profile.id;
      // One at a time: a snapshot may be large, and each is replaced all or nothing.
      await this.#db.transaction(async () => {
        const row = await this.#db.get<{ sealed: Buffer }>("SELECT sealed FROM profile_snapshots WHERE profile_id = $1 FOR UPDATE", [id]);
        if (row === undefined) return;
        const again = reseal(profile, row.sealed);
        if (!again.equals(row.sealed)) await this.#db.run("UPDATE profile_snapshots SET sealed = $1 WHERE profile_id = $2", [again, id]);
      });
    }
    return ids.length;
  }

  async removeUnreferencedSnapshots(): Promise<number> {
    // Saved state lives in the database, dropped with its profile: no file can be left over.
    return 0;
  }
}
