/** Concurrency usage: live (running or starting) browsers plus browser pool reservations. */
export interface UsageStore {
  /** Usage across every live project of the organization. */
  organization(orgId: string): Promise<number>;
  /** Usage of one project. */
  project(projectId: string): Promise<number>;
}
