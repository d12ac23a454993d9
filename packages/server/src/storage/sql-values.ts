/** A value SQLite stores or returns. */
export type SqlValue = number | bigint | string | Uint8Array | null;
/** Parameters bound to a statement: positional or named (`:name`). */
export type SqlParams = SqlValue[] | Record<string, SqlValue>;
