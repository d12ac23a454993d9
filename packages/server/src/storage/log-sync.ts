import { closeSync, fdatasyncSync, openSync } from "node:fs";
import { type FileHandle, open as openFile } from "node:fs/promises";

/**
 * `fdatasync` of a database's write-ahead log, as SQLite itself syncs on Linux: the log's
 * content (and its size when it grew) without its timestamps, so that once the log has
 * reached its working size a sync does not wait for the file system's journal, which
 * Chromium's profile writes keep busy. The file is opened once and kept: SQLite keeps the
 * same log file for as long as the database is open (a checkpoint rewinds it, closing
 * removes it).
 */
export class LogSync {
  readonly #path: string;
  #handle: Promise<FileHandle> | undefined;

  /** `path` is the log's file: the database file's name followed by `-wal`. */
  constructor(path: string) {
    this.#path = path;
  }

  /** Syncs the log on Node's thread pool, off the event loop. */
  readonly sync = async (): Promise<void> => {
    this.#handle ??= openFile(this.#path, "r");
    const handle = await this.#handle.catch((error: unknown) => {
      this.#handle = undefined;
      throw error;
    });
    await handle.datasync();
  };

  /** The same sync, blocking the event loop, for a write that must be on disk before the caller goes on. */
  syncNow(): void {
    const fd = openSync(this.#path, "r");
    try {
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** Lets go of the kept file once the database is closed. */
  close(): void {
    void this.#handle?.then((handle) => handle.close()).catch(() => undefined);
    this.#handle = undefined;
  }
}
