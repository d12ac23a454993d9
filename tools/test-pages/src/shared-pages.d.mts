import type { PageServer } from "./page-server.mjs";

/** Page script that reports a tool's run (`POST /runs/<key>`) before the tool does anything else. */
export declare function reportRun(key: string): string;

/** Page script that registers `count` tools, `tool_0`…, each answering `{ n, where }`. */
export declare function numberedTools(where: string, count: number): string;

/** Serves the pages the helpers' and the MCP bridge's tests share: `/blog`, `/widget-host`, `/widget`, `/forms`, `/forms/done`, `/blank`. */
export declare function serveSharedPages(pages: PageServer): void;
