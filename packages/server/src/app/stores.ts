import { ApiKeyStore } from "../auth/api-key-store.js";
import { AuthConnectionStore } from "../auth-connections/auth-connection-store.js";
import { BrowserStore } from "../browsers/browser-store.js";
import { ExtensionStore } from "../extensions/extension-store.js";
import { PoolReservationStore } from "../limits/pool-reservation-store.js";
import { UsageStore } from "../limits/usage-store.js";
import { OrganizationStore } from "../organization/organization-store.js";
import { ProjectStore } from "../projects/project-store.js";
import { SqliteDatabase } from "../storage/database.js";
import { ensureDataDir, type DataDirLayout } from "../storage/data-dir.js";
import { applyMigrations } from "../storage/migrations.js";
import type { Stores } from "../routes/api-deps.js";

/** Opens the data directory's database, brings its schema up to date, and builds the stores. */
export function openStores(layout: DataDirLayout): Stores {
  ensureDataDir(layout);
  const db = SqliteDatabase.open(layout.databaseFile);
  try {
    applyMigrations(db);
  } catch (error) {
    db.close();
    throw error;
  }
  const usage = new UsageStore(db);
  return {
    db,
    layout,
    organizations: new OrganizationStore(db),
    projects: new ProjectStore(db),
    apiKeys: new ApiKeyStore(db),
    usage,
    browsers: new BrowserStore(db, usage),
    extensions: new ExtensionStore(db, layout.extensionsDir),
    authConnections: new AuthConnectionStore(db),
    poolReservations: new PoolReservationStore(db),
  };
}
