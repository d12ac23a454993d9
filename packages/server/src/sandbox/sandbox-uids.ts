import { readFileSync } from "node:fs";

/** The first host account id handed to browsers by a server running as root, unless `--sandbox-uid-base` says otherwise. */
export const DEFAULT_SANDBOX_UID_BASE = 2_000_000_000;

/** How many consecutive account ids, from the base, browsers take turns with. */
export const SANDBOX_UID_COUNT = 65_536;

/** Every id of the range is held by a running browser. */
export class SandboxUidsExhaustedError extends Error {
  /** Stable code of the failure. */
  readonly code = "sandbox_uids_exhausted";

  constructor(count: number) {
    super(`All ${count} sandbox account ids are held by running browsers.`);
    this.name = "SandboxUidsExhaustedError";
  }
}

/**
 * Host accounts for browsers when the server runs as root: each running browser holds an
 * id of its own, which no other browser, no account of `/etc/passwd` or `/etc/group` and
 * not the server has, so that outside its sandbox too (file ownership, signals, `/proc`)
 * one browser is a stranger to every other. Ids are handed out in turn through the whole
 * range, so an id comes back only after every other one was used: a process of a browser
 * that just ended has long been gone before another browser gets its id.
 */
export class SandboxUids {
  readonly #base: number;
  readonly #count: number;
  readonly #reserved: Set<number>;
  readonly #held = new Set<number>();
  #next = 0;

  /** `reserved`: ids that belong to real accounts or groups. Default: those of `/etc/passwd` and `/etc/group`. */
  constructor(base: number = DEFAULT_SANDBOX_UID_BASE, count: number = SANDBOX_UID_COUNT, reserved: Set<number> = accountIds()) {
    if (!Number.isSafeInteger(base) || base < 1 || base + count > 0xffff_fffe)
      throw new RangeError(`The sandbox account ids ${base}..${base + count - 1} are not valid account ids (1..4294967293).`);
    this.#base = base;
    this.#count = count;
    this.#reserved = reserved;
  }

  /** Takes an id no running browser holds (throws {@link SandboxUidsExhaustedError} when none is left). */
  acquire(): number {
    for (let tried = 0; tried < this.#count; tried++) {
      const id = this.#base + this.#next;
      this.#next = (this.#next + 1) % this.#count;
      if (!this.#held.has(id) && !this.#reserved.has(id)) {
        this.#held.add(id);
        return id;
      }
    }
    throw new SandboxUidsExhaustedError(this.#count);
  }

  /** Gives an id back once its browser's processes have ended and its files are gone. */
  release(id: number): void {
    this.#held.delete(id);
  }
}

function accountIds(): Set<number> {
  const ids = new Set<number>();
  for (const file of ["/etc/passwd", "/etc/group"]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      const fields = line.split(":");
      for (const field of file.endsWith("passwd") ? [fields[2], fields[3]] : [fields[2]]) {
        if (field !== undefined && /^\d+$/.test(field)) ids.add(Number(field));
      }
    }
  }
  return ids;
}
