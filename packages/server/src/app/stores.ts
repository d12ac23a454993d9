import type { ApiKeyStore } from "../auth/api-key-store.js";
import { SqlApiKeyStore } from "../auth/sql-api-key-store.js";
import type { AuthConnectionStore } from "../auth-connections/auth-connection-store.js";
import { SqlAuthConnectionStore } from "../auth-connections/sql-auth-connection-store.js";
import type { BrowserStore } from "../browsers/browser-store.js";
import { abandonBrowsers, SqlBrowserStore } from "../browsers/sql-browser-store.js";
import type { CredentialStore } from "../credentials/credential-store.js";
import { SqlCredentialStore } from "../credentials/sql-credential-store.js";
import type { ExtensionStore } from "../extensions/extension-store.js";
import { SqlExtensionStore } from "../extensions/sql-extension-store.js";
import type { PoolReservationStore } from "../limits/pool-reservation-store.js";
import { SqlPoolReservationStore } from "../limits/sql-pool-reservation-store.js";
import { SqlUsageStore } from "../limits/sql-usage-store.js";
import type { UsageStore } from "../limits/usage-store.js";
import { PgNodeStore } from "../nodes/pg-node-store.js";
import type { OrganizationStore } from "../organization/organization-store.js";
import { SqlOrganizationStore } from "../organization/sql-organization-store.js";
import type { ProfileStore } from "../profiles/profile-store.js";
import { SqlProfileStore } from "../profiles/sql-profile-store.js";
import type { ProjectStore } from "../projects/project-store.js";
import { SqlProjectStore } from "../projects/sql-project-store.js";
import type { Stores } from "../routes/api-deps.js";
import { type DataDirLayout, ensureDataDir } from "../storage/data-dir.js";
import { SqliteDatabase } from "../storage/database.js";
import { applyMigrations } from "../storage/migrations.js";
import { PgDatabase } from "../storage/pg-database.js";
import { applyPgMigrations } from "../storage/pg-migrations.js";
import { pgStore, sqliteStore } from "../storage/program-runners.js";
import { UnitOfWorkGate } from "../storage/unit-of-work-gate.js";
import { SqlTelemetryStore, type TelemetryStore } from "../telemetry/sql-telemetry-store.js";

const SQLITE = { dialect: "sqlite" } as const;
const POSTGRES = { dialect: "postgres" } as const;

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
  const usage = new SqlUsageStore();
  return {
    layout,
    organizations: pgStore<OrganizationStore>(new SqlOrganizationStore(POSTGRES), db),
    projects: pgStore<ProjectStore>(new SqlProjectStore(POSTGRES), db),
    apiKeys: pgStore<ApiKeyStore>(new SqlApiKeyStore(POSTGRES), db),
    usage: pgStore<UsageStore>(usage, db),
    browsers: pgStore<BrowserStore>(new SqlBrowserStore({ ...POSTGRES, nodeId: location.nodeId }, usage), db),
    extensions: pgStore<ExtensionStore>(new SqlExtensionStore(POSTGRES, layout.extensionsDir), db),
    credentials: pgStore<CredentialStore>(new SqlCredentialStore(POSTGRES), db),
    profiles: pgStore<ProfileStore>(new SqlProfileStore(POSTGRES), db),
    authConnections: pgStore<AuthConnectionStore>(new SqlAuthConnectionStore(POSTGRES), db),
    poolReservations: pgStore<PoolReservationStore>(new SqlPoolReservationStore(POSTGRES), db),
    telemetry: pgStore<TelemetryStore>(new SqlTelemetryStore(), db),
    nodes: new PgNodeStore(db, abandonBrowsers),
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
  const usage = new SqlUsageStore();
  return {
    layout,
    organizations: gate.wrap<OrganizationStore>(sqliteStore<OrganizationStore>(new SqlOrganizationStore(SQLITE), db)),
    projects: gate.wrap<ProjectStore>(sqliteStore<ProjectStore>(new SqlProjectStore(SQLITE), db)),
    apiKeys: gate.wrap<ApiKeyStore>(sqliteStore<ApiKeyStore>(new SqlApiKeyStore(SQLITE), db)),
    usage: gate.wrap<UsageStore>(sqliteStore<UsageStore>(usage, db)),
    browsers: gate.wrap<BrowserStore>(sqliteStore<BrowserStore>(new SqlBrowserStore(SQLITE, usage), db)),
    extensions: gate.wrap<ExtensionStore>(sqliteStore<ExtensionStore>(new SqlExtensionStore(SQLITE, layout.extensionsDir), db)),
    credentials: gate.wrap<CredentialStore>(sqliteStore<CredentialStore>(new SqlCredentialStore(SQLITE), db)),
    profiles: gate.wrap<ProfileStore>(sqliteStore<ProfileStore>(new SqlProfileStore(SQLITE, layout.profilesDir), db)),
    authConnections: gate.wrap<AuthConnectionStore>(sqliteStore<AuthConnectionStore>(new SqlAuthConnectionStore(SQLITE), db)),
    poolReservations: gate.wrap<PoolReservationStore>(sqliteStore<PoolReservationStore>(new SqlPoolReservationStore(SQLITE), db)),
    telemetry: gate.wrap<TelemetryStore>(sqliteStore<TelemetryStore>(new SqlTelemetryStore(), db)),
    unitOfWork: (work) => gate.unitOfWork(work),
    durable: () => db.durable(),
    flush: () => db.flush(),
    close: async () => db.close(),
  };
}
