import type { ApiKeyStore } from "../auth/api-key-store.js";
import { SqliteApiKeyStore } from "../auth/sqlite-api-key-store.js";
import type { AuthConnectionStore } from "../auth-connections/auth-connection-store.js";
import { SqliteAuthConnectionStore } from "../auth-connections/sqlite-auth-connection-store.js";
import type { BrowserStore } from "../browsers/browser-store.js";
import { SqliteBrowserStore } from "../browsers/sqlite-browser-store.js";
import type { ExtensionStore } from "../extensions/extension-store.js";
import { SqliteExtensionStore } from "../extensions/sqlite-extension-store.js";
import type { PoolReservationStore } from "../limits/pool-reservation-store.js";
import { SqlitePoolReservationStore } from "../limits/sqlite-pool-reservation-store.js";
import { SqliteUsageStore } from "../limits/sqlite-usage-store.js";
import type { UsageStore } from "../limits/usage-store.js";
import type { OrganizationStore } from "../organization/organization-store.js";
import { SqliteOrganizationStore } from "../organization/sqlite-organization-store.js";
import type { ProjectStore } from "../projects/project-store.js";
import { SqliteProjectStore } from "../projects/sqlite-project-store.js";
import type { Stores } from "../routes/api-deps.js";
import { type DataDirLayout, ensureDataDir } from "../storage/data-dir.js";
import { SqliteDatabase } from "../storage/database.js";
import { applyMigrations } from "../storage/migrations.js";
import { UnitOfWorkGate } from "../storage/unit-of-work-gate.js";

/**
 * Opens the data directory's SQLite database, brings its schema up to date, and builds the
 * stores over it. Every SQLite call is synchronous; the stores' promises come from one
 * {@link UnitOfWorkGate}, which keeps other requests' calls out of an open unit of work.
 */
export function openStores(layout: DataDirLayout): Stores {
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
    authConnections: gate.wrap<AuthConnectionStore>(new SqliteAuthConnectionStore(db)),
    poolReservations: gate.wrap<PoolReservationStore>(new SqlitePoolReservationStore(db)),
    unitOfWork: (work) => gate.unitOfWork(work),
    durable: () => db.durable(),
    flush: () => db.flush(),
    close: () => db.close(),
  };
}
