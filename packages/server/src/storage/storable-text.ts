import { StorageError } from "./storage-error.js";

/**
 * Whether SQLite can hold `text` as it is: it has no NUL character. A key with a NUL can
 * name no stored row, so a lookup of one finds nothing without asking the database.
 */
export function isStorableText(text: string): boolean {
  return !text.includes("\u0000");
}

/**
 * Throws {@link StorageError} `storage_misuse` if a text in `params` has a NUL character.
 * PostgreSQL refuses such text outright; SQLite would silently cut it:
 *
 * node-sqlite3-wasm hands text to SQLite as a C string, which ends at the first NUL: "a\0b"
 * would be stored as "a", and a lookup of "Default\0x" would find "Default". Stores keep
 * NUL out ({@link isStorableText}); this check makes a store that forgot fail loudly
 * instead of reading, writing or deleting the wrong row.
 */
export function assertStorable(params: readonly unknown[] | Readonly<Record<string, unknown>>): void {
  const values = Array.isArray(params) ? params : Object.values(params);
  for (const value of values) {
    if (typeof value === "string" && !isStorableText(value)) {
      throw new StorageError(
        "storage_misuse",
        "A statement parameter contains a NUL character, which no database here stores as sent; check it before it reaches the database.",
      );
    }
  }
}
