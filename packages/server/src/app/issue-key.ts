import type { IssuedKey } from "../auth/api-key-store.js";
import type { Stores } from "../routes/api-deps.js";

/** A key cannot be issued as asked. */
export class KeyIssueError extends Error {
  /** Stable code of the failure. */
  readonly code: "no_organization" | "unknown_project" | "server_unresponsive" | "malformed_request" | "issue_failed";

  constructor(code: KeyIssueError["code"], message: string) {
    super(message);
    this.name = "KeyIssueError";
    this.code = code;
  }
}

/**
 * Issues an API key: org-wide, or scoped to the live project with id (or name)
 * `project`. Returns the secret, which exists nowhere else afterwards, once the key is
 * on disk: it is shown or handed over outside any response.
 */
export async function issueApiKey(stores: Stores, project?: string): Promise<IssuedKey> {
  const issued = await stores.unitOfWork(async () => {
    const org = await stores.organizations.find();
    if (!org)
      throw new KeyIssueError("no_organization", `The data directory ${stores.layout.root} has no organization yet; start the server there once first.`);
    if (project === undefined) return stores.apiKeys.insert(org.id, null);
    const row = await stores.projects.findByIdOrName(org.id, project);
    if (!row) throw new KeyIssueError("unknown_project", `No project has the id or name "${project}" in ${stores.layout.root}.`);
    return stores.apiKeys.insert(org.id, row.id);
  });
  stores.flush();
  return issued;
}
