import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { PRIVATE_FILE_MODE } from "../storage/data-dir.js";
import type { LaunchedBrowser } from "./browser-launcher.js";
import { PROFILE_PREFIX } from "./chromium-launcher.js";
import { endOrphanedBrowser } from "./orphaned-browser.js";

const RECORD_FILE_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.json$/;

/** Where a warm browser is written down while it waits, so a killed server's next start can end it. */
export interface WarmBrowserRecord {
  /** Removes the record: the browser closed, or its session's own record now names it. */
  remove(): Promise<void>;
}

/**
 * One small file per warm browser (`<uuid>.json`: its pid and profile directory) in the
 * data directory's `warm-browsers/`. Warm browsers are not sessions, so they have no row
 * in the database; Chromium outlives a `SIGKILL`ed server (it runs in its own process
 * group), and without these files nothing would ever end it or remove its profile.
 */
export class WarmBrowserRecords {
  readonly #dir: string;

  /** `dir` exists and is the server's own (see `ensureDataDir`). */
  constructor(dir: string) {
    this.#dir = dir;
  }

  /**
   * Writes down a launched warm browser. The file operations are asynchronous: they run
   * beside requests (removal right in a create), where a slow disk must not stall them.
   */
  async add(launched: LaunchedBrowser): Promise<WarmBrowserRecord> {
    const path = join(this.#dir, `${randomUUID()}.json`);
    await writeFile(path, JSON.stringify({ pid: launched.pid ?? null, user_data_dir: launched.userDataDir ?? null }), { mode: PRIVATE_FILE_MODE });
    return { remove: () => rm(path, { force: true }) };
  }

  /**
   * Ends every warm browser a previous server process left (checked by its command line,
   * so a recycled pid is never signalled), removes its profile and its record. Returns
   * how many records there were. Files this server did not name are left alone.
   */
  endLeftOver(): number {
    let count = 0;
    for (const name of readdirSync(this.#dir)) {
      if (!RECORD_FILE_NAME.test(name)) continue;
      const path = join(this.#dir, name);
      let record: { pid?: unknown; user_data_dir?: unknown } = {};
      try {
        record = JSON.parse(readFileSync(path, "utf8")) as typeof record;
      } catch {
        // Cut short by the kill while it was written: the browser had not been recorded yet.
      }
      // Only a profile the launcher names is removed, whatever the file says.
      const profile = typeof record.user_data_dir === "string" && basename(record.user_data_dir).startsWith(PROFILE_PREFIX) ? record.user_data_dir : null;
      endOrphanedBrowser(typeof record.pid === "number" ? record.pid : null, profile);
      rmSync(path, { force: true });
      count++;
    }
    return count;
  }
}
