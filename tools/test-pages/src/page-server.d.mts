// Types of page-server.mjs for the TypeScript tests (the repository sets allowJs: false).

/** A page's HTML, or a function of the server's port that returns it (to link 127.0.0.1 and localhost pages). */
export type PageSource = string | ((port: number) => string);

/**
 * Test pages on 127.0.0.1, also reachable as localhost: two sites to Chromium, so a
 * localhost frame in a 127.0.0.1 page is a real cross-origin frame, and both are secure
 * contexts as WebMCP requires. Pages count their tool runs with `POST /runs/<name>`.
 */
export declare class PageServer {
  private constructor();
  /** Starts on an ephemeral port of 127.0.0.1. */
  static start(): Promise<PageServer>;
  /** Serves `source` at `path`. */
  serve(path: string, source: PageSource): void;
  /** The URL of `path` on 127.0.0.1 or localhost. */
  url(path: string, host?: "127.0.0.1" | "localhost"): string;
  /** The origin of this server on 127.0.0.1 or localhost. */
  origin(host?: "127.0.0.1" | "localhost"): string;
  /** How many times pages reported running the tool counted as `name`. */
  runs(name: string): number;
  /** Forgets every count (between tests). */
  resetRuns(): void;
  /** Stops the server, dropping open connections. */
  close(): Promise<void>;
}
