import type { ApiKeyStore } from "../auth/api-key-store.js";
import { PgApiKeyStore } from "../auth/pg-api-key-store.js";
import { SqliteApiKeyStore } from "../auth/sqlite-api-key-store.js";
import type { AuthConnectionStore } from "../auth-connections/auth-connection-store.js";
import { PgAuthConnectionStore } from "../auth-connections/pg-auth-connection-store.js";
import { SqliteAuthConnectionStore } from "../auth-connections/sqlite-auth-connection-store.js";
import type { BrowserStore } from "../browsers/browser-store.js";
import { PgBrowserStore } from "../browsers/pg-browser-store.js";
import { SqliteBrowserStore } from "../browsers/sqlite-browser-store.js";
import type { CredentialStore } from "../credentials/credential-store.js";
import { PgCredentialStore } from "../credentials/pg-credential-store.js";
import { SqliteCredentialStore } from "../credentials/sqlite-credential-store.js";
import type { ExtensionStore } from "../extensions/extension-store.js";
import { PgExtensionStore } from "../extensions/pg-extension-store.js";
import { SqliteExtensionStore } from "../extensions/sqlite-extension-store.js";
import { PgPoolReservationStore } from "../limits/pg-pool-reservation-store.js";
import { PgUsageStore } from "../limits/pg-usage-store.js";
import type { PoolReservationStore } from "../limits/pool-reservation-store.js";
import { SqlitePoolReservationStore } from "../limits/sqlite-pool-reservation-store.js";
import { SqliteUsageStore } from "../limits/sqlite-usage-store.js";
import type { UsageStore } from "../limits/usage-store.js";
import { PgNodeStore } from "../nodes/pg-node-store.js";
import type { OrganizationStore } from "../organization/organization-store.js";
import { PgOrganizationStore } from "../organization/pg-organization-store.js";
import { SqliteOrganizationStore } from "../organization/sqlite-organization-store.js";
import { PgProfileStore } from "../profiles/pg-profile-store.js";
import type { ProfileStore } from "../profiles/profile-store.js";
import { SqliteProfileStore } from "../profiles/sqlite-profile-store.js";
import { PgProjectStore } from "../projects/pg-project-store.js";
import type { ProjectStore } from "../projects/project-store.js";
import { SqliteProjectStore } from "../projects/sqlite-project-store.js";
import type { Stores } from "../routes/api-deps.js";
import { type DataDirLayout, ensureDataDir } from "../storage/data-dir.js";
import { SqliteDatabase } from "../storage/database.js";
import { applyMigrations } from "../storage/migrations.js";
import { PgDatabase } from "../storage/pg-database.js";
import { applyPgMigrations } from "../storage/pg-migrations.js";
import { UnitOfWorkGate } from "../storage/unit-of-work-gate.js";

/** Where the control plane is stored: the data directory's SQLite file (the default) or a PostgreSQL database. */
export interface StoreLocation {
  /** A `postgres://` (or `postgresql://`) URL; absent: SQLite in the data directory. */
  databaseUrl?: string | undefined;
  /** This server's name among those sharing a PostgreSQL database (its browsers are recorded under it). */
  nodeId: string;
  /** Told of an error on an idle PostgreSQL connection. */
  onIdleError?: (error: Error) => void;
  /**
   * How long a PostgreSQL transaction may wait between its statements before the database
   * ends it, rolling it back and freeing its locks. Default 60 s.
   */
  idleInTransactionMs?: number;
}

/** Opens the stores where `location` says: {@link openSqliteStores} or {@link openPgStores}. */
export function openStores(layout: DataDirLayout, location: StoreLocation): Promise<Stores> {
  return location.databaseUrl === undefined
    ? Promise.resolve(openSqliteStores(layout))
    : openPgStores(layout, { ...location, databaseUrl: location.databaseUrl });
}

/**
 * Connects to a PostgreSQL database, brings its schema up to date (servers starting
 * together wait for each other) and builds the stores over it. Profiles, uploads being
 * received and this server's copies of extension archives stay in the data directory.
 */
export async function openPgStores(layout: DataDirLayout, location: StoreLocation & { databaseUrl: string }): Promise<Stores> {
  ensureDataDir(layout);
  const db = await PgDatabase.open(location.databaseUrl, {
    ...(location.onIdleError === undefined ? {} : { onIdleError: location.onIdleError }),
    ...(location.idleInTransactionMs === undefined ? {} : { idleInTransactionMs: location.idleInTransactionMs }),
  });
  try {
    await applyPgMigrations(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  const usage = new PgUsageStore(db);
  return {
    layout,
    organizations: new PgOrganizationStore(db),
    projects: new PgProjectStore(db),
    apiKeys: new PgApiKeyStore(db),
    usage,
    browsers: new PgBrowserStore(db, usage, location.nodeId),
    extensions: new PgExtensionStore(db, layout.extensionsDir),
    credentials: new PgCredentialStore(db),
    profiles: new PgProfileStore(db),
    authConnections: new PgAuthConnectionStore(db),
    poolReservations: new PgPoolReservationStore(db),
    nodes: new PgNodeStore(db),
    unitOfWork: (work) => db.unitOfWork(work),
    // A commit returned is on the database server's disk (synchronous_commit on).
    durable: () => undefined,
    flush: () => undefined,
    close: () => db.close(),
  };
}

/**
 * Opens the data directory's SQLite database, brings its schema up to date, and builds the
 * stores over it. Every SQLite call is synchronous; the stores' promises come from one
 * {@link UnitOfWorkGate}, which keeps other requests' calls out of an open unit of work.
 */
export function openSqliteStores(layout: DataDirLayout): Stores {
  ensureDataDir(layout);
  const db = SqliteDatabase.open(layout.databaseFile);
  try {
    applyMigrations(db);
  } catch (error) {
    db.close();
    throw error;
  }
  const gate = new UnitOfWorkGate(db.transactionSteps);
  const usage = new SqliteUsageStore(db);
  return {
    layout,
    organizations: gate.wrap<OrganizationStore>(new SqliteOrganizationStore(db)),
    projects: gate.wrap<ProjectStore>(new SqliteProjectStore(db)),
    apiKeys: gate.wrap<ApiKeyStore>(new SqliteApiKeyStore(db)),
    usage: gate.wrap<UsageStore>(usage),
    browsers: gate.wrap<BrowserStore>(new SqliteBrowserStore(db, usage)),
    extensions: gate.wrap<ExtensionStore>(new SqliteExtensionStore(db, layout.extensionsDir)),
    credentials: gate.wrap<CredentialStore>(new SqliteCredentialStore(db)),
    profiles: gate.wrap<ProfileStore>(new SqliteProfileStore(db, layout.profilesDir)),
    authConnections: gate.wrap<AuthConnectionStore>(new SqliteAuthConnectionStore(db)),
    poolReservations: gate.wrap<PoolReservationStore>(new SqlitePoolReservationStore(db)),
    unitOfWork: (work) => gate.unitOfWork(work),
    durable: () => db.durable(),
    flush: () => db.flush(),
    close: async () => db.close(),
  };
}
