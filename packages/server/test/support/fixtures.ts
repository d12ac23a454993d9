import { rmSync, writeFileSync } from "node:fs";

/** A minimal valid ManagedAuth record. */
export function managedAuth(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, profile_name: `profile-${id}`, domain: "example.org", status: "AUTHENTICATED", save_credentials: true, record_session: false, ...extra };
}

const written = new Set<string>();
process.once("exit", () => {
  for (const path of written) rmSync(path, { force: true });
});

/**
 * Writes a fixtures file beside the directory `dir` (`<dir>.fixtures.json`) and returns
 * its path. Not inside it: a server refuses a data directory holding files it did not
 * create. Removed when the test process exits.
 */
export function writeFixtures(dir: string, fixtures: unknown): string {
  const path = `${dir}.fixtures.json`;
  writeFileSync(path, JSON.stringify(fixtures, null, 2));
  written.add(path);
  return path;
}
