import type { TestProject } from "vitest/node";
// @ts-expect-error -- a plain ES module of the repository's tools, without type declarations.
import { startPostgresCluster } from "../../../../tools/repo/postgres-cluster.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's PostgreSQL server: the URL of its `postgres` database, or why there is none. */
    postgres: { adminUrl: string } | { unavailable: string };
  }
}

/**
 * One PostgreSQL server for the whole run (about a second to start, mostly `initdb`); each
 * test that needs one makes its own database on it (`freshDatabase`). A machine without
 * PostgreSQL still runs every other test; the PostgreSQL ones fail with the reason.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  let cluster: { url(database?: string): string; stop(): Promise<void> };
  try {
    cluster = await startPostgresCluster();
  } catch (error) {
    project.provide("postgres", { unavailable: (error as Error).message });
    return undefined;
  }
  project.provide("postgres", { adminUrl: cluster.url() });
  return () => cluster.stop();
}
