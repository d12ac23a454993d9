import { validateCreateProjectRequest } from "@browser-service/validators";
import { BadRequestError, NameConflictError, NotFoundError } from "../http/api-errors.js";

/** A project as the API shows it (the spec's `Project`). */
export interface Project {
  id: string;
  name: string;
  status: "active" | "archived";
  created_at: string;
  updated_at: string;
}

/** A live (not deleted) project row with its limit override. */
export interface ProjectRow extends Project {
  org_id: string;
  /** The project's own cap; `null` when not set. */
  max_concurrent_sessions: number | null;
}

/** Filters and page of {@link ProjectStore.list}. */
export interface ProjectListQuery {
  /** Only the project with exactly this name. */
  name?: string;
  /** Only projects whose name contains this text, ignoring case. */
  query?: string;
  /** Only this project (a project-scoped key sees only its own). */
  onlyId?: string;
  offset: number;
  limit: number;
}

/** A change asked by `PATCH /org/projects/{id}`. */
export interface ProjectChange {
  name?: string;
  status?: "active" | "archived";
}

/** The API's view of a project row. */
export function toProject(row: ProjectRow): Project {
  return { id: row.id, name: row.name, status: row.status, created_at: row.created_at, updated_at: row.updated_at };
}

/**
 * A project name as it is stored and compared: in Unicode NFC (the spec's `ProjectName`),
 * so that `café` typed with a combining accent (NFD) and precomposed (NFC) are one name.
 */
export function canonicalProjectName(name: string): string {
  return name.normalize("NFC");
}

/**
 * The NFC form of a name about to be stored. When normalizing changed it, it is checked
 * again against the spec's name rule: a few characters decompose under NFC, so a name
 * that passed the request check can grow past 255 characters. Such a name is 400
 * `bad_request`.
 */
export function storableName(name: string): string {
  const stored = canonicalProjectName(name);
  if (stored === name) return stored;
  const result = validateCreateProjectRequest({ name: stored });
  if (!result.ok) {
    const details = result.errors.map((issue) => ({ code: issue.rule, message: `In NFC, ${issue.message}` }));
    throw new BadRequestError(
      `The project name breaks the name rules once normalized to NFC (${details.length} problem${details.length === 1 ? "" : "s"}).`,
      details,
    );
  }
  return stored;
}

/** The 404 for a project that is not there (or, to a project-scoped key, not its own). */
export function projectNotFound(idOrName: string): NotFoundError {
  return new NotFoundError(`No project has the id or name "${idOrName}" in this organization.`);
}

/** The 409 for a project name already used (equal in NFC) by a live project. */
export function nameTaken(name: string): NameConflictError {
  return new NameConflictError(`A project named "${name}" already exists in this organization; choose another name.`);
}

/**
 * The projects of an organization and the rules of their states: unique names among
 * live projects, always one active project, soft delete of empty projects only. The
 * rules are `SqlProjectStore`, run on SQLite or PostgreSQL.
 */
export interface ProjectStore {
  /** The live project with this id, or `undefined`. */
  findById(orgId: string, id: string): Promise<ProjectRow | undefined>;
  /** The live project with this id or, failing that, this name; `undefined` when neither. */
  findByIdOrName(orgId: string, idOrName: string): Promise<ProjectRow | undefined>;
  /** The live project with this name (compared in NFC), or `undefined`. */
  findByName(orgId: string, name: string): Promise<ProjectRow | undefined>;
  /** Like {@link findByIdOrName}, but a missing project is a 404 `not_found`. */
  getByIdOrName(orgId: string, idOrName: string): Promise<ProjectRow>;
  /**
   * One page of live projects, oldest first, and whether more follow. Until the next write
   * the same query gives the same (frozen) `items` array, which callers may key on.
   */
  list(orgId: string, query: ProjectListQuery): Promise<{ items: readonly ProjectRow[]; hasMore: boolean }>;
  /**
   * Inserts an active project, its name stored in NFC; must run inside a unit of work. A
   * used name (equal in NFC) is 409 `name_conflict`.
   */
  insert(orgId: string, requestedName: string, now?: string): Promise<ProjectRow>;
  /** Creates an active project in its own transaction. */
  create(orgId: string, name: string): Promise<ProjectRow>;
  /**
   * Renames and/or archives or activates a project in one transaction. Archiving is
   * refused, in this order, for the last active project (409 `last_active_project`), the
   * organization's default project (409 `default_project`) and a project with running
   * or starting browsers (409 `browsers_running`); a used name (equal in NFC) is 409
   * `name_conflict`. A change that changes nothing leaves `updated_at` as it was.
   */
  update(orgId: string, project: ProjectRow, change: ProjectChange): Promise<ProjectRow>;
  /**
   * Soft-deletes a project: it vanishes from every read and its name becomes free.
   * Refused, in this order, for the last active project (409 `last_active_project`), the
   * organization's default project (409 `default_project`) and while active resources
   * remain (409 `project_not_empty`): running or starting browsers, extensions, credentials, profiles, auth
   * connections, browser pool reservations. Records of crashed browsers go with it.
   */
  delete(orgId: string, project: ProjectRow): Promise<void>;
  /** Sets or clears (`null`) the project's own concurrency cap. */
  setCap(project: ProjectRow, cap: number | null): Promise<ProjectRow>;
}
