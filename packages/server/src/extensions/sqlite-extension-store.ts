import { lstatSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { NameConflictError } from "../http/api-errors.js";
import { archiveFileName, fsyncDirectory, isArchiveFileName } from "../storage/data-dir.js";
import { isStorableText, isUniqueViolation, type SqliteDatabase } from "../storage/database.js";
import type { Synchronous } from "../storage/unit-of-work-gate.js";
import {
  EXTENSION_COLUMNS,
  type Extension,
  type ExtensionPage,
  type ExtensionStore,
  type ExtensionUpload,
  type ExtensionUse,
  newExtension,
} from "./extension-store.js";

/** {@link ExtensionStore} in SQLite, its archives `<id>.zip` in the extensions folder. */
export class SqliteExtensionStore implements Synchronous<ExtensionStore> {
  readonly #db: SqliteDatabase;
  readonly #dir: string;

  constructor(db: SqliteDatabase, extensionsDir: string) {
    this.#db = db;
    this.#dir = extensionsDir;
  }

  /**
   * Stores an upload all or nothing: inside one transaction the row is inserted and the
   * archive renamed into place (atomic on one file system) and the folder fsynced, then
   * the commit. If anything fails, the row rolls back and the archive is removed. A name
   * already used in the project is 409 `name_conflict`.
   */
  insert(upload: ExtensionUpload): Extension {
    const extension = newExtension(upload);
    const finalPath = this.archivePath(extension.id);
    try {
      this.#db.transaction(() => {
        this.#db.run("INSERT INTO extensions (id, project_id, name, size_bytes, checksum, created_at) VALUES (?, ?, ?, ?, ?, ?)", [
          extension.id,
          upload.projectId,
          extension.name,
          extension.size_bytes,
          extension.checksum,
          extension.created_at,
        ]);
        renameSync(upload.tempPath, finalPath);
        fsyncDirectory(this.#dir);
      });
    } catch (error) {
      rmSync(finalPath, { force: true });
      if (isUniqueViolation(error)) throw new NameConflictError(`An extension named "${upload.name}" already exists in this project; choose another name.`);
      throw error;
    } finally {
      rmSync(upload.tempPath, { force: true });
    }
    return extension;
  }

  find(projectId: string, by: "id" | "name", value: string): ExtensionUse | undefined {
    // No id or name holds a NUL, which SQLite's binding would cut the text at.
    if (!isStorableText(value)) return undefined;
    const column = by === "id" ? "id" : "name";
    return this.#db.get<ExtensionUse>(`SELECT id, name, checksum FROM extensions WHERE project_id = ? AND ${column} = ? AND deleted_at IS NULL`, [
      projectId,
      value,
    ]);
  }

  list(projectId: string, { offset, limit, name }: ExtensionPage): { items: Extension[]; hasMore: boolean } {
    if (name !== undefined && !isStorableText(name)) return { items: [], hasMore: false };
    const rows = this.#db.all<Extension>(
      `SELECT ${EXTENSION_COLUMNS} FROM extensions WHERE project_id = ? AND deleted_at IS NULL${name === undefined ? "" : " AND name = ?"} ORDER BY seq LIMIT ? OFFSET ?`,
      name === undefined ? [projectId, limit + 1, offset] : [projectId, name, limit + 1, offset],
    );
    return { items: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  get(projectId: string, idOrName: string): Extension | undefined {
    if (!isStorableText(idOrName)) return undefined;
    return (
      this.#db.get<Extension>(`SELECT ${EXTENSION_COLUMNS} FROM extensions WHERE project_id = ? AND id = ? AND deleted_at IS NULL`, [projectId, idOrName]) ??
      this.#db.get<Extension>(`SELECT ${EXTENSION_COLUMNS} FROM extensions WHERE project_id = ? AND name = ? AND deleted_at IS NULL`, [projectId, idOrName])
    );
  }

  /** The row is marked first; the archive goes after the commit, or at the next start after a crash. */
  delete(projectId: string, id: string): boolean {
    const marked = this.#db.transaction(() =>
      this.#db.run("UPDATE extensions SET deleted_at = ? WHERE project_id = ? AND id = ? AND deleted_at IS NULL", [new Date().toISOString(), projectId, id]),
    );
    if (marked === 0) return false;
    rmSync(this.archivePath(id), { force: true });
    return true;
  }

  archivePath(id: string): string {
    return join(this.#dir, archiveFileName(id));
  }

  /**
   * Removes archives that no row points at, or only a deleted one: left by a crash
   * between the rename and the commit, they belong to uploads that were never
   * acknowledged; between a delete's commit and its unlink, to deleted extensions. Only files named as the
   * server names archives (`<extension id>.zip`) are candidates: anything else in the
   * folder is not the server's to delete.
   */
  removeUnreferencedArchives(): number {
    const known = new Set(this.#db.all<{ id: string }>("SELECT id FROM extensions WHERE deleted_at IS NULL").map((row) => archiveFileName(row.id)));
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
}
