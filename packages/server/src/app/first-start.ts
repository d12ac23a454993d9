import type { IssuedKey } from "../auth/api-key-store.js";
import type { Organization } from "../organization/organization-store.js";
import type { ProjectRow } from "../projects/project-store.js";
import type { Stores } from "../routes/api-deps.js";
import { newId } from "../storage/ids.js";

/** What the first start created. */
export interface FirstStart {
  org: Organization;
  /** The project named `Default`, the organization's default project. */
  project: ProjectRow;
  /** The org-wide key; its secret is shown once and stored only as a hash. */
  key: IssuedKey;
}

/**
 * Creates the organization, its `Default` project and an org-wide API key, in one
 * transaction, when the database has no organization yet; otherwise does nothing and
 * returns `undefined`.
 */
export function initializeOrganization(stores: Stores): Promise<FirstStart | undefined> {
  return stores.unitOfWork(async () => {
    if (await stores.organizations.find()) return undefined;
    const now = new Date().toISOString();
    const org: Organization = { id: newId("organization"), default_project_id: "", default_project_max_concurrent_sessions: null, created_at: now };
    await stores.organizations.insert(org);
    const project = await stores.projects.insert(org.id, "Default", now);
    await stores.organizations.setDefaultProject(org.id, project.id);
    org.default_project_id = project.id;
    return { org, project, key: await stores.apiKeys.insert(org.id, null) };
  });
}

/** The lines that announce a first start; the only place a first key's secret appears. */
export function firstStartBanner(first: FirstStart, dataDir: string): string {
  return [
    `First start in ${dataDir}: created organization ${first.org.id}, project "Default" (${first.project.id}) and an org-wide API key.`,
    "",
    `  BROWSER_SERVICE_API_KEY=${first.key.secret}`,
    "",
    "This API key is shown only once; it is stored as a hash. Issue more with `browser-service-server keys create`.",
    "",
  ].join("\n");
}
