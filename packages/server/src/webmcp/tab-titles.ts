import { limits } from "@browser-service/types";

/**
 * How old a tab title a listing may show (the spec's `page_title` `x-max-age-ms`).
 * Chromium sends no event when a page sets `document.title`, so titles are read with
 * `Target.getTargets`, a round trip through the browser's UI thread that cost most of a
 * listing's time at 30 tabs; one read serves every listing within this age.
 */
export const TITLE_MAX_AGE_MS = limits.schemas.WebMcpToolSource.page_title.maxAgeMs;

/** Reads every tab's current title, by target id. */
export type ReadTitles = () => Promise<Map<string, string>>;

interface TitlesRead {
  // When the read was sent: Chromium answered with titles at least this recent.
  sentAt: number;
  // The registry's version when it was sent: tabs and documents as they were then.
  version: number;
  titles: Promise<Map<string, string>>;
}

/**
 * The tab titles of one DevTools connection: one read from the browser serves listings
 * for less than {@link TITLE_MAX_AGE_MS} (or the age given; 0 reads for every listing)
 * while the registry's version stays the same. A new version
 * (a tab opened or closed, a document committed) reads them again, so a listing never
 * pairs a new document with a title of its tab from before it; concurrent listings share
 * one read, and a read that failed is not kept.
 */
export class TabTitles {
  readonly #read: ReadTitles;
  readonly #now: () => number;
  readonly #maxAgeMs: number;
  #last: TitlesRead | undefined;

  constructor(read: ReadTitles, options: { maxAgeMs?: number; now?: () => number } = {}) {
    this.#read = read;
    this.#maxAgeMs = options.maxAgeMs ?? TITLE_MAX_AGE_MS;
    this.#now = options.now ?? (() => performance.now());
  }

  /** The titles for a listing at the registry's `version`. */
  current(version: number): Promise<Map<string, string>> {
    const last = this.#last;
    const now = this.#now();
    if (last !== undefined && last.version === version && now - last.sentAt < this.#maxAgeMs) return last.titles;
    const titles = this.#read();
    const read: TitlesRead = { sentAt: now, version, titles };
    this.#last = read;
    titles.catch(() => {
      if (this.#last === read) this.#last = undefined;
    });
    return titles;
  }
}
