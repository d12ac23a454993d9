import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** A minimal valid ManagedAuth record. */
export function managedAuth(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, profile_name: `profile-${id}`, domain: "example.org", status: "AUTHENTICATED", save_credentials: true, record_session: false, ...extra };
}

/** Writes a fixtures file into `dir` and returns its path. */
export function writeFixtures(dir: string, fixtures: unknown): string {
  const path = join(dir, "fixtures.json");
  writeFileSync(path, JSON.stringify(fixtures, null, 2));
  return path;
}
