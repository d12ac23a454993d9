import { createHash, randomUUID } from "node:crypto";
import { lstatSync, readdirSync } from "node:fs";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { NameConflictError } from "../http/api-errors.js";
import { archiveFileName, isArchiveFileName } from "../storage/data-dir.js";
import { isStorableText } from "../storage/database.js";
import { isPgUniqueViolation, type PgDatabase } from "../storage/pg-database.js";
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

/**
 * {@link ExtensionStore} in PostgreSQL. Each archive is committed with its record, in the
 * database every server shares (at most 50 MiB each, the spec's upload cap): no shared
 * folder to mount and keep consistent, and a crash can never leave one without the other.
 * A server keeps its own copy of an archive, `<id>.zip` in its extensions folder, written
 * the first time one of its browsers needs it (and at the upload, on the server that
 * received it); archives never change, so a copy never goes stale.
 */
export class PgExtensionStore implements ExtensionStore {
  readonly #db: PgDatabase;
  readonly #dir: string;

  constructor(db: PgDatabase, extensionsDir: string) {
    this.#db = db;
    this.#dir = extensionsDir;
  }

  async insert(upload: ExtensionUpload): Promise<Extension> {
    const extension = newExtension(upload);
    try {
      const archive = await readFile(upload.tempPath);
      await this.#db.transaction(async () => {
        await this.#db.run("INSERT INTO extensions (id, project_id, name, size_bytes, checksum, created_at) VALUES ($1, $2, $3, $4, $5, $6)", [
          extension.id,
          upload.projectId,
          extension.name,
          extension.size_bytes,
          extension.checksum,
          extension.created_at,
        ]);
        await this.#db.run("INSERT INTO extension_archives (extension_id, archive) VALUES ($1, $2)", [extension.id, archive]);
      });
      // This server's copy; committed already, so a failure here only means reading it back later.
      await rename(upload.tempPath, this.#localPath(extension.id)).catch(() => undefined);
    } catch (error) {
      if (isPgUniqueViolation(error)) throw new NameConflictError(`An extension named "${upload.name}" already exists in this project; choose another name.`);
      throw error;
    } finally {
      await rm(upload.tempPath, { force: true });
    }
    return extension;
  }

  async find(projectId: string, by: "id" | "name", value: string): Promise<ExtensionUse | undefined> {
    if (!isStorableText(value)) return undefined;
    const column = by === "id" ? "id" : "name";
    return this.#db.get<ExtensionUse>(`SELECT id, name, checksum FROM extensions WHERE project_id = $1 AND ${column} = $2 AND deleted_at IS NULL`, [
      projectId,
      value,
    ]);
  }

  async list(projectId: string, { offset, limit, name }: ExtensionPage): Promise<{ items: Extension[]; hasMore: boolean }> {
    if (name !== undefined && !isStorableText(name)) return { items: [], hasMore: false };
    const rows = await this.#db.all<Extension>(
      `SELECT ${EXTENSION_COLUMNS} FROM extensions WHERE project_id = $1 AND deleted_at IS NULL${name === undefined ? "" : " AND name = $4"} ORDER BY seq LIMIT $2 OFFSET $3`,
      name === undefined ? [projectId, limit + 1, offset] : [projectId, limit + 1, offset, name],
    );
    return { items: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  async get(projectId: string, idOrName: string): Promise<Extension | undefined> {
    if (!isStorableText(idOrName)) return undefined;
    return (
      (await this.#db.get<Extension>(`SELECT ${EXTENSION_COLUMNS} FROM extensions WHERE project_id = $1 AND id = $2 AND deleted_at IS NULL`, [
        projectId,
        idOrName,
      ])) ??
      (await this.#db.get<Extension>(`SELECT ${EXTENSION_COLUMNS} FROM extensions WHERE project_id = $1 AND name = $2 AND deleted_at IS NULL`, [
        projectId,
        idOrName,
      ]))
    );
  }

  /**
   * The row is marked and the archive's bytes deleted in one transaction; this server's
   * copy goes after the commit, another server's at its next start.
   */
  async delete(projectId: string, id: string): Promise<boolean> {
    const marked = await this.#db.transaction(async () => {
      const changed = await this.#db.run("UPDATE extensions SET deleted_at = $1 WHERE project_id = $2 AND id = $3 AND deleted_at IS NULL", [
        new Date().toISOString(),
        projectId,
        id,
      ]);
      if (changed > 0) await this.#db.run("DELETE FROM extension_archives WHERE extension_id = $1", [id]);
      return changed;
    });
    if (marked === 0) return false;
    await rm(this.#localPath(id), { force: true });
    return true;
  }

  /** This server's copy of the archive, written from the database first when it has none. */
  async archivePath(id: string): Promise<string> {
    const path = this.#localPath(id);
    try {
      if (lstatSync(path).isFile()) return path;
    } catch {
      // No copy yet: read it from the database below.
    }
    const row = await this.#db.get<{ archive: Buffer; checksum: string }>(
      "SELECT a.archive, e.checksum FROM extension_archives a JOIN extensions e ON e.id = a.extension_id WHERE a.extension_id = $1",
      [id],
    );
    // The caller found the record a moment ago; a delete since then leaves nothing to unpack,
    // which the unpacking reports as an unreadable archive.
    if (row === undefined) return path;
    if (createHash("sha256").update(row.archive).digest("hex") !== row.checksum) throw new ArchiveChecksumError(id);
    const temp = join(this.#dir, `.${randomUUID()}.part`);
    try {
      await writeFile(temp, row.archive, { mode: 0o600, flag: "wx" });
      await rename(temp, path);
    } finally {
      await rm(temp, { force: true });
    }
    return path;
  }

  async removeUnreferencedArchives(): Promise<number> {
    const known = new Set((await this.#db.all<{ id: string }>("SELECT id FROM extensions WHERE deleted_at IS NULL")).map((row) => archiveFileName(row.id)));
    let removed = 0;
    for (const file of readdirSync(this.#dir)) {
      const path = join(this.#dir, file);
      if (!known.has(file) && isArchiveFileName(file) && lstatSync(path).isFile()) {
        await rm(path, { force: true });
        removed++;
      }
    }
    return removed;
  }

  #localPath(id: string): string {
    return join(this.#dir, archiveFileName(id));
  }
}
