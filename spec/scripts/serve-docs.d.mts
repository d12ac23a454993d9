// Types of serve-docs.mjs for the TypeScript tests (the repository sets allowJs: false).
import type { Server } from "node:http";

export declare const defaultDistDir: string;
export declare function createDocsServer(options?: { distDir?: string }): Server;
export declare function startDocsServer(options?: {
  port?: number;
  host?: string;
  distDir?: string;
}): Promise<{ server: Server; url: string; close: () => Promise<void> }>;
