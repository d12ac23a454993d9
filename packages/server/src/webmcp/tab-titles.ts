import { limits } from "@browser-service/types";

/**
 * How old a tab title a listing may show (the spec's `page_title` `x-max-age-ms`).
 * Chromium sends no event when a page sets `document.title`, so titles are read with
 * `Target.getTargets`, a round trip through the browser's UI thread that cost most of a
 * listing's time at 30 tabs; one read serves every listing within this age.
 */
export const TITLE_MAX_AGE_MS = limits.schemas.WebMcpToolSource.page_title.maxAgeMs;

/** A tab's title as one read found it, with the URL (as the API shows it) of the document it was the title of. */
export interface TabTitle {
  title: string;
  url: string;
}

/** Reads every tab's current title, by target id. */
export type ReadTitles = () => Promise<Map<string, TabTitle>>;

/** Titles as read for a listing, and the registry's version when the read was sent. */
export interface TitlesRead {
  titles: Map<string, TabTitle>;
  version: number;
}

interface PendingRead {
  // When the read was sent: Chromium answered with titles at least this recent.
  sentAt: number;
  // The registry's version when it was sent: tabs and documents as they were then.
  version: number;
  read: Promise<TitlesRead>;
}

/**
 * The tab titles of one DevTools connection: one read from the browser serves listings
 * for less than {@link TITLE_MAX_AGE_MS} (or the age given; 0 reads for every listing)
 * while the registry's version stays the same. A new version (a tab opened or closed, a
 * document committed) reads them again; concurrent listings share one read, and a read
 * that failed is not kept. Each title comes with its document's URL, so that a listing
 * can tell a title read before a navigation from one of the document it lists.
 */
export class TabTitles {
  readonly #read: ReadTitles;
  readonly #now: () => number;
  readonly #maxAgeMs: number;
  #last: PendingRead | undefined;

  constructor(read: ReadTitles, options: { maxAgeMs?: number; now?: () => number } = {}) {
    this.#read = read;
    this.#maxAgeMs = options.maxAgeMs ?? TITLE_MAX_AGE_MS;
    this.#now = options.now ?? (() => performance.now());
  }

  /** The titles for a listing at the registry's `version`, with the version they were read at. */
  current(version: number): Promise<TitlesRead> {
    const last = this.#last;
    const now = this.#now();
    if (last !== undefined && last.version === version && now - last.sentAt < this.#maxAgeMs) return last.read;
    const read = this.#read().then((titles) => ({ titles, version }));
    const pending: PendingRead = { sentAt: now, version, read };
    this.#last = pending;
    read.catch(() => {
      if (this.#last === pending) this.#last = undefined;
    });
    return read;
  }
}
