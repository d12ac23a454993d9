/** The organization a data directory serves. */
export interface Organization {
  id: string;
  /** The project a request acts on without a project header or a project-scoped key. */
  default_project_id: string;
  /** The default per-project cap; `null` when not set. */
  default_project_max_concurrent_sessions: number | null;
  created_at: string;
}

/** The organization row: its default project and default per-project cap. */
export interface OrganizationStore {
  /** The organization, or `undefined` before the first start created it. */
  find(): Promise<Organization | undefined>;
  /** The organization with this id; it must exist (every key names one). */
  get(id: string): Promise<Organization>;
  /** Inserts the organization; must run inside a unit of work. */
  insert(org: Organization): Promise<void>;
  /** Points the organization at its default project; must run inside a unit of work. */
  setDefaultProject(id: string, projectId: string): Promise<void>;
  /** Sets or clears (`null`) the default per-project cap. */
  setDefaultProjectCap(id: string, cap: number | null): Promise<void>;
}
