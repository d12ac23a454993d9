/** Why a storage operation failed, as a stable code. */
export type StorageErrorCode = "storage_busy" | "storage_misuse" | "storage_sync_failed" | "storage_unavailable";

/** A failure of the storage layer itself (not of a constraint the caller can expect). */
export class StorageError extends Error {
  /** Stable code of the failure. */
  readonly code: StorageErrorCode;

  constructor(code: StorageErrorCode, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "StorageError";
    this.code = code;
  }
}
