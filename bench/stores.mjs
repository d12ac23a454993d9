#!/usr/bin/env node
// Store seam benchmark: what writing each store's rules once, as programs over a dialect
// seam (packages/server/src/storage/sql-program.ts), costs on SQLite's request path. The
// reads every API request makes (its key, its organization, a page of projects) run
// through the seam (program, runner, the `sql` tag, the unit-of-work gate) and, side by
// side on the same database, as the hand-written synchronous store made them: the same
// statement text straight to `SqliteDatabase` behind the same gate. Prints the time per
// call of each, the ratio, and what the seam adds per request, beside a request's p50
// (bench/server.mjs measures that: about 300 µs for GET /org/projects with one client).
// Rounds alternate, so noise hits both alike; the best round of each counts.
//
//   node bench/stores.mjs                 (after `pnpm build`)
//   node bench/stores.mjs --calls 20000   (calls per round; default 100000)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const server = new URL("../packages/server/dist/", import.meta.url);
const { SqliteDatabase } = await import(new URL("storage/database.js", server).href);
const { applyMigrations } = await import(new URL("storage/migrations.js", server).href);
const { UnitOfWorkGate } = await import(new URL("storage/unit-of-work-gate.js", server).href);
const { sqliteStore } = await import(new URL("storage/program-runners.js", server).href);
const { SqlProjectStore } = await import(new URL("projects/sql-project-store.js", server).href);
const { SqlApiKeyStore } = await import(new URL("auth/sql-api-key-store.js", server).href);
const { SqlOrganizationStore } = await import(new URL("organization/sql-organization-store.js", server).href);

const { values } = parseArgs({ options: { calls: { type: "string", default: "100000" }, rounds: { type: "string", default: "5" } } });
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);

const dir = mkdtempSync(join(tmpdir(), "bench-stores-"));
const db = SqliteDatabase.open(join(dir, "bench.sqlite"));
try {
  applyMigrations(db);
  const gate = new UnitOfWorkGate(db.transactionSteps);
  const SQLITE = { dialect: "sqlite" };
  const projects = gate.wrap(sqliteStore(new SqlProjectStore(SQLITE), db));
  const apiKeys = gate.wrap(sqliteStore(new SqlApiKeyStore(SQLITE), db));
  const organizations = gate.wrap(sqliteStore(new SqlOrganizationStore(SQLITE), db));

  const { org, project, secret } = await gate.unitOfWork(async () => {
    const org = { id: "org_bench", default_project_id: "", default_project_max_concurrent_sessions: null, created_at: new Date().toISOString() };
    await organizations.insert(org);
    const project = await projects.insert(org.id, "Default");
    await organizations.setDefaultProject(org.id, project.id);
    for (let i = 1; i < 20; i++) await projects.insert(org.id, `project-${i}`);
    const key = await apiKeys.insert(org.id, null);
    return { org, project, secret: key.secret };
  });
  if (!(await apiKeys.authenticate(secret))) throw new Error("bench/stores FAILED: the key does not authenticate");

  // The statements the hand-written SQLite stores made for the same reads.
  const PROJECT_COLUMNS = "id, org_id, name, status, created_at, updated_at, max_concurrent_sessions";
  const JSON_COLUMNS = PROJECT_COLUMNS.split(", ")
    .map((column) => `'${column}', ${column}`)
    .join(", ");
  const direct = {
    project: () =>
      gate.run(() => db.remembered("get", `SELECT ${PROJECT_COLUMNS} FROM projects WHERE org_id = ? AND id = ? AND deleted_at IS NULL`, [org.id, project.id])),
    page: () =>
      gate.run(() =>
        db.rememberedJsonRows(
          `SELECT json_group_array(json_object(${JSON_COLUMNS}) ORDER BY seq) AS rows FROM (SELECT seq, ${PROJECT_COLUMNS} FROM projects WHERE org_id = :org AND deleted_at IS NULL ORDER BY seq LIMIT :limit OFFSET :offset)`,
          { ":org": org.id, ":limit": 21, ":offset": 0 },
        ),
      ),
  };
  const seam = {
    project: () => projects.findById(org.id, project.id),
    page: () => projects.list(org.id, { limit: 20, offset: 0 }),
  };
  // Both answer alike, or the comparison means nothing.
  if (JSON.stringify(await direct.project()) !== JSON.stringify(await seam.project())) throw new Error("bench/stores FAILED: findById answers differ");
  if ((await direct.page()).length !== (await seam.page()).items.length) throw new Error("bench/stores FAILED: the pages differ");

  async function microsPerCall(call) {
    const started = performance.now();
    for (let i = 0; i < CALLS; i++) await call();
    return ((performance.now() - started) * 1000) / CALLS;
  }
  const best = { direct: { project: Infinity, page: Infinity }, seam: { project: Infinity, page: Infinity } };
  for (let round = 0; round < ROUNDS; round++) {
    for (const read of ["project", "page"]) {
      best.direct[read] = Math.min(best.direct[read], await microsPerCall(direct[read]));
      best.seam[read] = Math.min(best.seam[read], await microsPerCall(seam[read]));
    }
  }
  console.log(`\nSQLite store reads, ${CALLS} calls per round, best of ${ROUNDS} rounds\n`);
  console.log("| read                               | hand-written µs/call | seam µs/call | seam / hand-written |");
  console.log("| ---------------------------------- | -------------------: | -----------: | ------------------: |");
  const names = { project: "a project by id (remembered)", page: "a page of 20 projects (remembered)" };
  for (const read of ["project", "page"]) {
    const d = best.direct[read];
    const s = best.seam[read];
    console.log(`| ${names[read].padEnd(34)} | ${d.toFixed(2).padStart(20)} | ${s.toFixed(2).padStart(12)} | ${(s / d).toFixed(2).padStart(18)}x |`);
  }
  const added = best.seam.page - best.direct.page + 2 * (best.seam.project - best.direct.project);
  console.log(
    `\nGET /org/projects makes about three such reads (its key, its organization, the page): the seam adds about ${added.toFixed(1)} µs to a request of about 300 µs (${((added / 300) * 100).toFixed(1)}%).`,
  );
} finally {
  db.close();
  rmSync(dir, { recursive: true, force: true });
}
