import { newId } from "../storage/ids.js";

/** A stored archive does not match the checksum recorded at its upload: it is never used or sent. */
export class ArchiveChecksumError extends Error {
  /** Stable code of the failure. */
  readonly code = "archive_checksum_mismatch";

  constructor(id: string) {
    super(`The stored archive of extension ${id} does not match its recorded checksum; it was not used or sent.`);
    this.name = "ArchiveChecksumError";
  }
}

/** An extension as the API shows it (the spec's `Extension`). */
export interface Extension {
  id: string;
  name: string | null;
  created_at: string;
  last_used_at: string | null;
  size_bytes: number;
  checksum: string;
}

/** A checked archive waiting to be stored. */
export interface ExtensionUpload {
  projectId: string;
  name: string | undefined;
  /** The received archive, on the same file system as the extensions folder. */
  tempPath: string;
  sizeBytes: number;
  checksum: string;
}

/** The extension an `extensions` entry of a create names: what a browser loads and shows. */
export interface ExtensionUse {
  id: string;
  /** Its name at the time; `null` when its upload gave none. */
  name: string | null;
  /** The SHA-256 of its archive, so that an unpacked copy is known by its content. */
  checksum: string;
}

/** Which page of {@link ExtensionStore.list} to read. */
export interface ExtensionPage {
  offset: number;
  limit: number;
  /** Only the extension of exactly this name. */
  name?: string | undefined;
}

/** The columns of an {@link Extension}, in both databases. */
export const EXTENSION_COLUMNS = "id, name, created_at, last_used_at, size_bytes, checksum";

/** The record an upload becomes: a new id, never used yet. */
export function newExtension(upload: ExtensionUpload): Extension {
  return {
    id: newId("extension"),
    name: upload.name ?? null,
    created_at: new Date().toISOString(),
    last_used_at: null,
    size_bytes: upload.sizeBytes,
    checksum: upload.checksum,
  };
}

/** Extension records and their archives. */
export interface ExtensionStore {
  /** The project's extension (not deleted) with this id (when `by` is `id`) or this name, or `undefined`. */
  find(projectId: string, by: "id" | "name", value: string): Promise<ExtensionUse | undefined>;
  /**
   * Stores an upload all or nothing: the record and the archive are both kept, or
   * neither is and the received file is removed. A name already used in the project is
   * 409 `name_conflict`.
   */
  insert(upload: ExtensionUpload): Promise<Extension>;
  /**
   * One page of the project's extensions not deleted, oldest first; with `name`, only
   * the one of that name.
   */
  list(projectId: string, page: ExtensionPage): Promise<{ items: Extension[]; hasMore: boolean }>;
  /** The project's extension with this id, else with this name, or `undefined` (deleted ones too). */
  get(projectId: string, idOrName: string): Promise<Extension | undefined>;
  /**
   * Deletes extension `id` of the project: its record is marked deleted (browsers that
   * loaded it keep showing it), its name is free again and its archive is removed.
   * Returns `false` when it was deleted already.
   */
  delete(projectId: string, id: string): Promise<boolean>;
  /** Where the archive of extension `id` lives. */
  archivePath(id: string): Promise<string>;
  /**
   * Removes archives that no record points at, or only a deleted one (left by a crash
   * mid-upload, never acknowledged, or mid-delete); never a file it did not name itself. Returns how many it removed.
   */
  removeUnreferencedArchives(): Promise<number>;
}
