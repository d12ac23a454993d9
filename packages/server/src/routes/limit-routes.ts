import { limits, type OrgLimits, type ProjectLimits } from "@browser-service/types";
import type { FastifyInstance } from "fastify";
import type { BodyOf } from "../http/request-validation.js";
import { available } from "../limits/concurrency.js";
import type { Organization } from "../organization/organization-store.js";
import type { ProjectRow } from "../projects/project-store.js";
import type { ApiDeps } from "./api-deps.js";

/**
 * The largest cap the spec's limits schemas allow (their `maximum`, one value for the
 * organization default and the project cap; test/integers.test.ts holds all four equal).
 */
export const MAX_CAP = limits.schemas.UpdateProjectLimitsRequest.max_concurrent_sessions.maximum;

/**
 * A stored cap as the API shows it. Caps written before the spec bounded them may be
 * anything up to 2^63, which SQLite hands back as a BigInt (JSON cannot carry one) or a
 * number past the bound. A cap never lets a project pass the organization limit, so any
 * cap above the bound means what the bound means, and reads as it.
 */
export function storedCap(value: number | bigint | null): number | null {
  if (value === null) return null;
  return value > MAX_CAP ? MAX_CAP : Number(value);
}

/** `/org/limits` and `/org/projects/{id}/limits`: the concurrency limits. */
export function registerLimitRoutes(app: FastifyInstance, { stores, planLimit }: ApiDeps): void {
  const orgLimits = async (org: Organization): Promise<OrgLimits> => {
    const used = await stores.usage.organization(org.id);
    return {
      max_concurrent_sessions: planLimit,
      default_project_max_concurrent_sessions: storedCap(org.default_project_max_concurrent_sessions),
      concurrent_sessions_used: used,
      concurrent_sessions_available: available(planLimit, used),
    };
  };
  // max_pooled_sessions is deprecated: always null, and requests setting it never get this far.
  const projectLimits = (project: ProjectRow): ProjectLimits => ({
    max_concurrent_sessions: storedCap(project.max_concurrent_sessions),
    max_pooled_sessions: null,
  });

  app.get("/org/limits", { config: { operationId: "getOrgLimits" } }, async (request) => orgLimits(await stores.organizations.get(request.scope.org.id)));

  app.patch<{ Body: BodyOf<"updateOrgLimits"> }>(
    "/org/limits",
    { config: { operationId: "updateOrgLimits", orgWideOnly: "Changing the organization's limits" } },
    async (request) => {
      const body = request.body;
      const cap = body.default_project_max_concurrent_sessions;
      await stores.organizations.setDefaultProjectCap(request.scope.org.id, cap === 0 ? null : cap);
      return orgLimits(await stores.organizations.get(request.scope.org.id));
    },
  );

  app.get<{ Params: { id: string } }>("/org/projects/:id/limits", { config: { operationId: "getProjectLimits", projectAdmin: true } }, async (request) => {
    return projectLimits(await request.scope.visibleProject(request.params.id));
  });

  app.patch<{ Params: { id: string }; Body: BodyOf<"updateProjectLimits"> }>(
    "/org/projects/:id/limits",
    { config: { operationId: "updateProjectLimits", projectAdmin: true, orgWideOnly: "Changing a project's limits" } },
    async (request) => {
      const body = request.body;
      const project = await stores.projects.getByIdOrName(request.scope.org.id, request.params.id);
      const cap = body.max_concurrent_sessions;
      return projectLimits(await stores.projects.setCap(project, cap === 0 ? null : cap));
    },
  );
}
