import { getRow, inTransaction, type Programs, runSql, type SqlProgram, type SqlStoreContext } from "../storage/sql-program.js";
import { type Dialect, rawSql, sql } from "../storage/sql-text.js";
import type { Organization, OrganizationStore } from "./organization-store.js";

const COLUMNS = rawSql("id, default_project_id, default_project_max_concurrent_sessions, created_at");

/** {@link OrganizationStore}'s rules, once for both databases. */
export class SqlOrganizationStore implements Programs<OrganizationStore> {
  /** The database the store runs on (its rules are the same on both). */
  readonly dialect: Dialect;

  constructor(context: SqlStoreContext) {
    this.dialect = context.dialect;
  }

  *find(): SqlProgram<Organization | undefined> {
    return yield* getRow<Organization>(sql`SELECT ${COLUMNS} FROM organizations ORDER BY created_at LIMIT 1`);
  }

  *get(id: string): SqlProgram<Organization> {
    const org = yield* getRow<Organization>(sql`SELECT ${COLUMNS} FROM organizations WHERE id = ${id}`, { remembered: true });
    if (!org) throw new Error(`Organization ${id} named by an API key does not exist; the database is inconsistent.`);
    return org;
  }

  *insert(org: Organization): SqlProgram<void> {
    yield* runSql(
      sql`INSERT INTO organizations (${COLUMNS}) VALUES (${org.id}, ${org.default_project_id}, ${org.default_project_max_concurrent_sessions}, ${org.created_at})`,
    );
  }

  *setDefaultProject(id: string, projectId: string): SqlProgram<void> {
    yield* runSql(sql`UPDATE organizations SET default_project_id = ${projectId} WHERE id = ${id}`);
  }

  *setDefaultProjectCap(id: string, cap: number | null): SqlProgram<void> {
    yield* inTransaction(() => runSql(sql`UPDATE organizations SET default_project_max_concurrent_sessions = ${cap} WHERE id = ${id}`));
  }
}
