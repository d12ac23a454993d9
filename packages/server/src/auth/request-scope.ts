import { ForbiddenError, ProjectNotFoundError } from "../http/api-errors.js";
import type { Organization } from "../organization/organization-store.js";
import { type ProjectRow, type ProjectStore, projectNotFound } from "../projects/project-store.js";
import { type Credential, keyReaches } from "./api-key-store.js";

/** The name of the project header (ids only). */
export const PROJECT_HEADER = "x-service-project-id";

/**
 * Who a request acts as and on which project, following the seed's Authentication rules:
 * the project header (checked against the key's scope), else a project-scoped key's own
 * project, else the organization's default project.
 */
export class RequestScope {
  /** The authenticated key. */
  readonly credential: Credential;
  /** The key's organization. */
  readonly org: Organization;
  readonly #projects: ProjectStore;
  readonly #headerProject: ProjectRow | undefined;

  private constructor(credential: Credential, org: Organization, projects: ProjectStore, headerProject: ProjectRow | undefined) {
    this.credential = credential;
    this.org = org;
    this.#projects = projects;
    this.#headerProject = headerProject;
  }

  /**
   * The scope of a request, its project header checked: a project-scoped key naming
   * another project is 403 `forbidden`; a header naming an unknown, archived or deleted
   * project is 404 `project_not_found`.
   */
  static async of(credential: Credential, org: Organization, projects: ProjectStore, header: string | undefined): Promise<RequestScope> {
    if (header === undefined) return new RequestScope(credential, org, projects, undefined);
    if (credential.projectId !== null && header !== credential.projectId) {
      throw new ForbiddenError(
        `This API key is scoped to project ${credential.projectId} and cannot act on project ${header}; omit X-Service-Project-Id or use an org-wide key.`,
      );
    }
    const project = await projects.findById(org.id, header);
    if (project?.status !== "active") {
      throw new ProjectNotFoundError(`No active project has the id "${header}" given in X-Service-Project-Id; names are not accepted there.`);
    }
    return new RequestScope(credential, org, projects, project);
  }

  /**
   * A scope another node of the service resolved already (it authenticated the key and
   * checked the project), for a request it forwarded here with the nodes' secret: nothing
   * is read again.
   */
  static resolved(credential: Credential, org: Organization, projects: ProjectStore, project: ProjectRow): RequestScope {
    return new RequestScope(credential, org, projects, project);
  }

  /** Whether the key is org-wide (may administer projects and see all of them). */
  get isOrgWide(): boolean {
    return this.credential.projectId === null;
  }

  /**
   * The active project the request acts on: the header's, else the key's own, else the
   * organization's default project. One that is archived or deleted is 404 `project_not_found`.
   */
  async project(): Promise<ProjectRow> {
    if (this.#headerProject) return this.#headerProject;
    const id = this.credential.projectId ?? this.org.default_project_id;
    const project = await this.#projects.findById(this.org.id, id);
    if (project?.status === "active") return project;
    throw new ProjectNotFoundError(
      this.credential.projectId === null
        ? `The organization's default project ${id} is ${project ? "archived" : "deleted"}; name an active project in X-Service-Project-Id.`
        : `The project ${id} of this API key is ${project ? "archived" : "deleted"}.`,
    );
  }

  /** Refuses (403 `forbidden`) a project-scoped key: project administration needs an org-wide key. */
  requireOrgWide(action: string): void {
    if (!this.isOrgWide) {
      throw new ForbiddenError(`${action} needs an org-wide API key; this key is scoped to project ${this.credential.projectId}.`);
    }
  }

  /**
   * The project `idOrName` names, as this key may see it. A project-scoped key sees only its
   * own: another project of the organization is answered exactly as a missing one (404
   * `not_found`, the same message), so that such a key learns nothing of other projects,
   * not even whether a name is taken or which id it has.
   */
  async visibleProject(idOrName: string): Promise<ProjectRow> {
    const project = await this.#projects.findByIdOrName(this.org.id, idOrName);
    if (!project || !keyReaches(this.credential, project)) throw projectNotFound(idOrName);
    return project;
  }

  /**
   * Refuses (403 `forbidden`) a change to an archived project by a key scoped to it: an
   * archived project is frozen for its own keys (they may still read it, to learn that it
   * is archived); an org-wide key may change it, or make it active again.
   */
  requireChangeable(project: ProjectRow): void {
    if (!this.isOrgWide && project.status === "archived") {
      throw new ForbiddenError(
        `This API key's project ${project.id} is archived, and its own keys cannot change it; an org-wide key can (or can make it active again).`,
      );
    }
  }
}
