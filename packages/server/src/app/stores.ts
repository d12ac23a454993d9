import { SqliteApiKeyStore } from "../auth/sqlite-api-key-store.js";
import { SqliteAuthConnectionStore } from "../auth-connections/sqlite-auth-connection-store.js";
import { SqliteBrowserStore } from "../browsers/sqlite-browser-store.js";
import { SqliteExtensionStore } from "../extensions/sqlite-extension-store.js";
import { SqlitePoolReservationStore } from "../limits/sqlite-pool-reservation-store.js";
import { SqliteUsageStore } from "../limits/sqlite-usage-store.js";
import { SqliteOrganizationStore } from "../organization/sqlite-organization-store.js";
import { SqliteProjectStore } from "../projects/sqlite-project-store.js";
import type { Stores } from "../routes/api-deps.js";
import { type DataDirLayout, ensureDataDir } from "../storage/data-dir.js";
import { SqliteDatabase } from "../storage/database.js";
import { applyMigrations } from "../storage/migrations.js";

/** Opens the data directory's SQLite database, brings its schema up to date, and builds the stores over it. */
export function openStores(layout: DataDirLayout): Stores {
  ensureDataDir(layout);
  const db = SqliteDatabase.open(layout.databaseFile);
  try {
    applyMigrations(db);
  } catch (error) {
    db.close();
    throw error;
  }
  const usage = new SqliteUsageStore(db);
  return {
    layout,
    organizations: new SqliteOrganizationStore(db),
    projects: new SqliteProjectStore(db),
    apiKeys: new SqliteApiKeyStore(db),
    usage,
    browsers: new SqliteBrowserStore(db, usage),
    extensions: new SqliteExtensionStore(db, layout.extensionsDir),
    authConnections: new SqliteAuthConnectionStore(db),
    poolReservations: new SqlitePoolReservationStore(db),
    unitOfWork: (work) => db.transaction(work),
    durable: () => db.durable(),
    flush: () => db.flush(),
    close: () => db.close(),
  };
}
