// Types of serve-docs.mjs for the TypeScript tests (the repository sets allowJs: false).
export declare const defaultDistDir: string;
export declare function startDocsServer(options?: { port?: number; distDir?: string }): Promise<{ url: string; close: () => Promise<void> }>;
