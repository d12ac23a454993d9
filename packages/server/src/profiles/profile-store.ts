import { newId } from "../storage/ids.js";

/** A profile as the API shows it (the spec's `Profile`). */
export interface Profile {
  id: string;
  name: string | null;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
  size_bytes: number;
  last_save_error: ProfileSaveError | null;
}

/** Why a save into a profile was given up (the spec's `ProfileSaveError`). */
export interface ProfileSaveError {
  code: "profile_too_large" | "profile_not_saved";
  message: string;
  browser_id: string;
  at: string;
}

/** A profile's row as both databases give it: the save error in four columns. */
export interface StoredProfile extends Omit<Profile, "last_save_error" | "size_bytes"> {
  size_bytes: number | string;
  save_error_code: ProfileSaveError["code"] | null;
  save_error_message: string | null;
  save_error_browser_id: string | null;
  save_error_at: string | null;
}

/** The API's profile of a stored row. */
export function fromStoredProfile(row: StoredProfile): Profile {
  const { save_error_code: code, save_error_message: message, save_error_browser_id: browserId, save_error_at: at, ...rest } = row;
  return {
    ...rest,
    // BIGINT comes back as text from PostgreSQL.
    size_bytes: Number(row.size_bytes),
    last_save_error: code === null || message === null || browserId === null || at === null ? null : { code, message, browser_id: browserId, at },
  };
}

/** The record a create makes: a new id, no saved state. */
export function newProfile(name: string | undefined): Profile {
  const now = new Date().toISOString();
  return { id: newId("profile"), name: name ?? null, created_at: now, updated_at: now, last_used_at: null, size_bytes: 0, last_save_error: null };
}

/** The columns of a {@link Profile}, in both databases. */
export const PROFILE_COLUMNS =
  "id, name, created_at, updated_at, last_used_at, size_bytes, save_error_code, save_error_message, save_error_browser_id, save_error_at";

/** Which page of {@link ProfileStore.list} to read. */
export interface ProfilePage {
  offset: number;
  limit: number;
  /** Only the profile of exactly this name. */
  name?: string | undefined;
  /** Only profiles whose name contains this text in any letter case, or whose id is exactly it. */
  query?: string | undefined;
}

/** Profile records and their sealed saved state. */
export interface ProfileStore {
  /** Stores a new profile; a name used in the project is 409 `name_conflict`. */
  insert(projectId: string, profile: Profile): Promise<void>;
  /** The project's profile with this id, else with this name, or `undefined`. */
  get(projectId: string, idOrName: string): Promise<Profile | undefined>;
  /** One page of the project's profiles, oldest first. */
  list(projectId: string, page: ProfilePage): Promise<{ items: Profile[]; hasMore: boolean }>;
  /** Renames profile `id` of the project (`undefined` when it is gone); a name used is 409 `name_conflict`. */
  rename(projectId: string, id: string, name: string): Promise<Profile | undefined>;
  /**
   * Deletes profile `id` of the project and its saved state; `false` when it was gone. A
   * browser not crashed that saves into it holds it: 409 `profile_in_use`, nothing deleted.
   */
  delete(projectId: string, id: string): Promise<boolean>;
  /** The sealed saved state of profile `id`, or `undefined` when it has none. */
  readSnapshot(id: string): Promise<Buffer | undefined>;
  /**
   * Replaces the saved state of profile `id` with `sealed` (whose opened size is
   * `sizeBytes`), all or nothing: a crash at any point leaves the previous state whole.
   * Clears its `last_save_error`. Returns `false` when the profile is gone (nothing is stored).
   */
  saveSnapshot(id: string, sealed: Buffer, sizeBytes: number): Promise<boolean>;
  /** Records why a save into profile `id` was given up; its state stays as it was. */
  recordSaveError(id: string, error: ProfileSaveError): Promise<void>;
  /**
   * Passes every saved state through `reseal` and stores what it returns, each all or
   * nothing; returns how many it passed.
   */
  resealAll(reseal: (profile: { id: string; project_id: string }, sealed: Buffer) => Buffer): Promise<number>;
  /** Removes saved-state files no profile points at (left by a crash mid-save); returns how many. */
  removeUnreferencedSnapshots(): Promise<number>;
}
