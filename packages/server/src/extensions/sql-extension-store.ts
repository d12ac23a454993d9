import { createHash, randomUUID } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { NameConflictError } from "../http/api-errors.js";
import { archiveFileName, fsyncDirectory, isArchiveFileName } from "../storage/data-dir.js";
import { isStorableText } from "../storage/database.js";
import { isUniqueViolation } from "../storage/program-runners.js";
import { allRows, fileWork, getRow, inTransaction, type Programs, runSql, type SqlProgram, type SqlStoreContext } from "../storage/sql-program.js";
import { type Dialect, rawSql, sql } from "../storage/sql-text.js";
import {
  ArchiveChecksumError,
  EXTENSION_COLUMNS,
  type Extension,
  type ExtensionPage,
  type ExtensionStore,
  type ExtensionUpload,
  type ExtensionUse,
  newExtension,
} from "./extension-store.js";

const COLUMNS = rawSql(EXTENSION_COLUMNS);

/**
 * {@link ExtensionStore}'s rules, once for both databases; archives are `<id>.zip` in the
 * extensions folder.
 *
 * In SQLite the folder holds the archives themselves, each renamed into place inside the
 * transaction that inserts its record.
 *
 * In PostgreSQL each archive is committed with its record, in the database every server
 * shares (at most 50 MiB each, the spec's upload cap): no shared folder to mount and keep
 * consistent, and a crash can never leave one without the other. A server keeps its own
 * copy of an archive in its extensions folder, written the first time one of its browsers
 * needs it (and at the upload, on the server that received it); archives never change, so
 * a copy never goes stale.
 *
 * The file work is synchronous, between the rules' steps, on both databases.
 */
export class SqlExtensionStore implements Programs<ExtensionStore> {
  readonly #dialect: Dialect;
  readonly #dir: string;

  constructor(context: SqlStoreContext, extensionsDir: string) {
    this.#dialect = context.dialect;
    this.#dir = extensionsDir;
  }

  /**
   * Stores an upload all or nothing. In SQLite, inside one transaction the row is inserted
   * and the archive renamed into place (atomic on one file system) and the folder fsynced,
   * then the commit; if anything fails, the row rolls back and the archive is removed. In
   * PostgreSQL the row and the archive's bytes are committed together, then the received
   * file becomes this server's copy. A name already used in the project is 409
   * `name_conflict`.
   */
  *insert(upload: ExtensionUpload): SqlProgram<Extension> {
    const extension = newExtension(upload);
    const finalPath = this.#localPath(extension.id);
    try {
      const archive =
        this.#dialect === "postgres"
          ? yield* fileWork(
              () => readFileSync(upload.tempPath),
              () => readFile(upload.tempPath),
            )
          : undefined;
      yield* inTransaction(() => this.#insert(upload, extension, archive));
      if (this.#dialect === "postgres") {
        try {
          renameSync(upload.tempPath, finalPath);
        } catch {
          // This server's copy; committed already, so a failure here only means reading it back later.
        }
      }
    } catch (error) {
      // Only SQLite's rename (before a commit that failed) can have put an archive there.
      rmSync(finalPath, { force: true });
      if (isUniqueViolation(error)) throw new NameConflictError(`An extension named "${upload.name}" already exists in this project; choose another name.`);
      throw error;
    } finally {
      rmSync(upload.tempPath, { force: true });
    }
    return extension;
  }

  // The record, and the archive: its bytes (PostgreSQL, `archive`), or the received file renamed into place (SQLite).
  *#insert(upload: ExtensionUpload, extension: Extension, archive: Buffer | undefined): SqlProgram<void> {
    yield* runSql(
      sql`INSERT INTO extensions (id, project_id, name, size_bytes, checksum, created_at) VALUES (${extension.id}, ${upload.projectId}, ${extension.name}, ${extension.size_bytes}, ${extension.checksum}, ${extension.created_at})`,
    );
    if (archive !== undefined) {
      yield* runSql(sql`INSERT INTO extension_archives (extension_id, archive) VALUES (${extension.id}, ${archive})`);
      return;
    }
    renameSync(upload.tempPath, this.#localPath(extension.id));
    fsyncDirectory(this.#dir);
  }

  *find(projectId: string, by: "id" | "name", value: string): SqlProgram<ExtensionUse | undefined> {
    // No id or name holds a NUL, which SQLite's binding would cut the text at.
    if (!isStorableText(value)) return undefined;
    const column = rawSql(by === "id" ? "id" : "name");
    return yield* getRow<ExtensionUse>(
      sql`SELECT id, name, checksum FROM extensions WHERE project_id = ${projectId} AND ${column} = ${value} AND deleted_at IS NULL`,
    );
  }

  *list(projectId: string, { offset, limit, name }: ExtensionPage): SqlProgram<{ items: Extension[]; hasMore: boolean }> {
    if (name !== undefined && !isStorableText(name)) return { items: [], hasMore: false };
    const byName = name === undefined ? sql`` : sql` AND name = ${name}`;
    const rows = yield* allRows<Extension>(
      sql`SELECT ${COLUMNS} FROM extensions WHERE project_id = ${projectId} AND deleted_at IS NULL${byName} ORDER BY seq LIMIT ${limit + 1} OFFSET ${offset}`,
    );
    return { items: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  *get(projectId: string, idOrName: string): SqlProgram<Extension | undefined> {
    if (!isStorableText(idOrName)) return undefined;
    return (
      (yield* getRow<Extension>(sql`SELECT ${COLUMNS} FROM extensions WHERE project_id = ${projectId} AND id = ${idOrName} AND deleted_at IS NULL`)) ??
      (yield* getRow<Extension>(sql`SELECT ${COLUMNS} FROM extensions WHERE project_id = ${projectId} AND name = ${idOrName} AND deleted_at IS NULL`))
    );
  }

  /**
   * The row is marked first (in PostgreSQL, with the archive's bytes deleted in the same
   * transaction); this server's archive goes after the commit, or at the next start after
   * a crash (another server's copy at its next start).
   */
  *delete(projectId: string, id: string): SqlProgram<boolean> {
    const marked = yield* inTransaction(() => this.#markDeleted(projectId, id));
    if (marked === 0) return false;
    rmSync(this.#localPath(id), { force: true });
    return true;
  }

  *#markDeleted(projectId: string, id: string): SqlProgram<number> {
    const changed = yield* runSql(
      sql`UPDATE extensions SET deleted_at = ${new Date().toISOString()} WHERE project_id = ${projectId} AND id = ${id} AND deleted_at IS NULL`,
    );
    if (changed > 0 && this.#dialect === "postgres") yield* runSql(sql`DELETE FROM extension_archives WHERE extension_id = ${id}`);
    return changed;
  }

  /** Where the archive lives: in PostgreSQL, this server's copy, written from the database first when it has none. */
  *archivePath(id: string): SqlProgram<string> {
    const path = this.#localPath(id);
    if (this.#dialect === "sqlite") return path;
    try {
      if (lstatSync(path).isFile()) return path;
    } catch {
      // No copy yet: read it from the database below.
    }
    const row = yield* getRow<{ archive: Buffer; checksum: string }>(
      sql`SELECT a.archive, e.checksum FROM extension_archives a JOIN extensions e ON e.id = a.extension_id WHERE a.extension_id = ${id}`,
    );
    // The caller found the record a moment ago; a delete since then leaves nothing to unpack,
    // which the unpacking reports as an unreadable archive.
    if (row === undefined) return path;
    if (createHash("sha256").update(row.archive).digest("hex") !== row.checksum) throw new ArchiveChecksumError(id);
    const temp = join(this.#dir, `.${randomUUID()}.part`);
    try {
      yield* fileWork(
        () => writeFileSync(temp, row.archive, { mode: 0o600, flag: "wx" }),
        () => writeFile(temp, row.archive, { mode: 0o600, flag: "wx" }),
      );
      renameSync(temp, path);
    } finally {
      rmSync(temp, { force: true });
    }
    return path;
  }

  /**
   * Removes archives that no row points at, or only a deleted one: in SQLite, left by a
   * crash between the rename and the commit, they belong to uploads that were never
   * acknowledged; between a delete's commit and its unlink, to deleted extensions. Only
   * files named as the server names archives (`<extension id>.zip`) are candidates:
   * anything else in the folder is not the server's to delete.
   */
  *removeUnreferencedArchives(): SqlProgram<number> {
    const known = new Set((yield* allRows<{ id: string }>(sql`SELECT id FROM extensions WHERE deleted_at IS NULL`)).map((row) => archiveFileName(row.id)));
    let removed = 0;
    for (const file of readdirSync(this.#dir)) {
      const path = join(this.#dir, file);
      if (!known.has(file) && isArchiveFileName(file) && lstatSync(path).isFile()) {
        rmSync(path, { force: true });
        removed++;
      }
    }
    return removed;
  }

  #localPath(id: string): string {
    return join(this.#dir, archiveFileName(id));
  }
}
