import type { KeyCheckStore } from "../secrets/secrets-vault.js";

/** A credential as stored: its values and TOTP settings sealed, never in the clear. */
export interface CredentialRow {
  id: string;
  project_id: string;
  name: string;
  domain: string;
  sso_provider: string | null;
  /** The keys of the sealed values, sorted. */
  value_keys: string[];
  /** The values as JSON, sealed for this row (see `CredentialVault`). */
  values_sealed: string;
  /** The TOTP settings as JSON, sealed for this row; `null` without a secret. */
  totp_sealed: string | null;
  created_at: string;
  updated_at: string;
}

/** Which page of {@link CredentialStore.list} to read. */
export interface CredentialPage {
  offset: number;
  limit: number;
  /** Only credentials for exactly this (normalized) domain. */
  domain?: string | undefined;
  /** Only those whose name or domain contains this text in any letter case, or whose id is exactly it. */
  query?: string | undefined;
}

/** One sealed value of a row, and the context it is sealed for. */
export interface SealedField {
  id: string;
  project_id: string;
  domain: string;
  column: "values_sealed" | "totp_sealed";
  sealed: string;
}

/**
 * Credential rows, and the check value that tells whether a key is the one that sealed
 * the database's secrets (kept with them, as they are the first).
 */
export interface CredentialStore extends KeyCheckStore {
  /** Stores a new credential; a name used in the project is 409 `name_conflict`. */
  insert(row: CredentialRow): Promise<void>;
  /** The project's credential with this id, else with this name, or `undefined`. */
  get(projectId: string, idOrName: string): Promise<CredentialRow | undefined>;
  /** One page of the project's credentials, oldest first. */
  list(projectId: string, page: CredentialPage): Promise<{ items: CredentialRow[]; hasMore: boolean }>;
  /**
   * Replaces credential `id` of the project with what `change` makes of it, in one
   * transaction (`undefined` when it is gone); a name used in the project is 409
   * `name_conflict` and nothing changes.
   */
  update(projectId: string, id: string, change: (current: CredentialRow) => CredentialRow): Promise<CredentialRow | undefined>;
  /** Deletes credential `id` of the project; `false` when it was gone already. */
  delete(projectId: string, id: string): Promise<boolean>;
  /**
   * Passes every sealed value through `reseal` and stores what it returns, in one
   * transaction: all or nothing. Returns how many values it passed.
   */
  resealAll(reseal: (field: SealedField) => string): Promise<number>;
}
