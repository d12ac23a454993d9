// The published packages as a user gets them: every public package's tarball installed
// with plain npm into a fresh project outside the workspace, a strict TypeScript consumer
// compiled against the published declarations, then run on Node 20, 22 and 24 against
// the reference server, started from the installed @browser-service/server tarball.
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { PageServer } from "@browser-service/test-pages";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { installNode } from "../src/node-runtimes.mjs";
import { mustRun, run, userEnv } from "../src/run.mjs";
import { repoRoot } from "../src/workspace.mjs";
import { type RunningServer, startReferenceServer } from "./support/reference-server.js";

const packed = inject("packed");
const consumerTemplate = fileURLToPath(new URL("../consumer", import.meta.url));
const fixtures = fileURLToPath(new URL("./fixtures", import.meta.url));
const rootManifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));
const authConnection = JSON.parse(readFileSync(join(fixtures, "server-fixtures.json"), "utf8")).auth_connections[0];

const withHelpers = packed.some((pkg) => pkg.name === "@browser-service/webmcp-helpers");
const serverPackage = "@browser-service/server";
const mcpPackage = packed.find((pkg) => pkg.name === "@browser-service/mcp");
/** The Node majors besides the one running this test (in CI the oldest supported, 20). */
const currentMajor = Number(process.versions.node.split(".")[0]);
const otherMajors = [22, 24].filter((major) => major !== currentMajor);
const majors = [currentMajor, ...otherMajors];

/** Every entry point of every public package, as an importer names it (JSON files included). */
function entrySpecifiers(): string[] {
  return packed.flatMap((pkg) => {
    const manifest = JSON.parse(readFileSync(join(pkg.dir, "package.json"), "utf8"));
    return Object.keys(manifest.exports ?? {})
      .filter((subpath) => subpath !== "./package.json" && !subpath.endsWith(".yaml"))
      .map((subpath) => `${pkg.name}${subpath.slice(1)}`);
  });
}

describe("a consumer project outside the workspace", () => {
  let project: string;
  let nodeDir: string;
  /** The node binary of each major. */
  const runtimes = new Map<number, string>([[currentMajor, process.execPath]]);
  let server: RunningServer | undefined;
  let page: PageServer | undefined;
  let env: NodeJS.ProcessEnv;
  let installLog = "";

  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), "browser-service-consumer-"));
    nodeDir = mkdtempSync(join(tmpdir(), "browser-service-node-"));
    if (!relative(repoRoot, project).startsWith("..")) throw new Error(`${project} is inside the workspace; set TMPDIR to a folder outside it.`);
    // The WebMCP program only goes in when its package exists.
    cpSync(consumerTemplate, project, { recursive: true, filter: (source) => withHelpers || !source.endsWith("webmcp.ts") });

    const toolchain = ["typescript", "@types/node"].map((name) => `${name}@${rootManifest.devDependencies[name]}`);
    const installing = mustRun("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...packed.map((pkg) => pkg.tarball), ...toolchain], {
      cwd: project,
      env: userEnv(),
    });
    const nodes = otherMajors.map((major) => [major, installNode(major, join(nodeDir, String(major)))] as const);
    // Wait for every install before any failure is thrown, so none still writes into a folder afterAll deletes.
    await Promise.allSettled([installing, ...nodes.map(([, node]) => node)]);
    const install = await installing;
    installLog = `${install.stdout}${install.stderr}`;
    for (const [major, node] of nodes) runtimes.set(major, await node);

    const serverManifest = JSON.parse(readFileSync(join(project, "node_modules", serverPackage, "package.json"), "utf8"));
    const bin = join(project, "node_modules", ".bin", Object.keys(serverManifest.bin)[0]!);
    server = await startReferenceServer(
      bin,
      ["--allow-private-network", "--data-dir", join(project, ".data"), "--fixtures", join(fixtures, "server-fixtures.json")],
      { ...userEnv(), LOG_LEVEL: "warn" },
    );
    page = await PageServer.start();
    page.serve("/tools.html", readFileSync(join(fixtures, "tool-page.html"), "utf8"));
    env = {
      ...userEnv(),
      BROWSER_SERVICE_BASE_URL: server.url,
      BROWSER_SERVICE_API_KEY: server.apiKey,
      CONSUMER_AUTH_CONNECTION_ID: authConnection.id,
      CONSUMER_TOOL_PAGE_URL: page.url("/tools.html"),
    };
    delete env.BROWSER_SERVICE_PROJECT_ID; // the default project
  }, 240_000);

  /** Runs one consumer program against the server; a failure also shows what the server logged. */
  async function runProgram(node: string, program: string, label: string): Promise<Record<string, any>> {
    const result = await run(node, [program, label], { cwd: project, env });
    if (result.status !== 0) {
      throw new Error(
        `node ${program} ${label} failed (exit ${result.status ?? result.signal}):\n${result.stdout}${result.stderr}\nThe server logged:\n${server?.output()}`,
      );
    }
    return JSON.parse(result.stdout.trim().split("\n").at(-1)!);
  }

  afterAll(async () => {
    await server?.stop();
    await page?.close();
    for (const dir of [project, nodeDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("installs every public package from its tarball", () => {
    const installed = packed.map((pkg) => {
      const manifest = join(project, "node_modules", pkg.name, "package.json");
      return existsSync(manifest) ? `${pkg.name}@${JSON.parse(readFileSync(manifest, "utf8")).version}` : `${pkg.name} missing`;
    });
    expect(installed).toEqual(packed.map((pkg) => `${pkg.name}@${pkg.version}`));
  });

  // Every package declares Node 20.19+; under engine-strict (a common CI setting) npm
  // refuses a dependency that asks for more, so on Node 20 there must be none.
  it(`installs on Node ${currentMajor} without an engine warning`, () => {
    const warnings = installLog.split("\n").filter((line) => line.includes("EBADENGINE"));
    expect(warnings, "npm install of the tarballs: a dependency needs a newer Node than the packages' engines say").toEqual([]);
  });

  it("compiles with tsc --strict, module NodeNext and skipLibCheck off", async () => {
    const tsc = await run(process.execPath, [join(project, "node_modules", "typescript", "bin", "tsc"), "-p", project], { cwd: project });
    expect(tsc.status, `tsc -p ${project}:\n${tsc.stdout}${tsc.stderr}`).toBe(0);
  }, 120_000);

  describe.each(majors)("on Node %i", (major) => {
    const label = `node${major}`;
    const node = () => runtimes.get(major)!;
    const version = new RegExp(`^v${major}\\.`);

    it("creates, lists and deletes a project, and validates what the service sent", async () => {
      const seen = await runProgram(node(), "dist/core.js", label);
      expect(seen.node).toMatch(version);
      expect(seen.created).toEqual({ name: `consumer-${label}`, status: "active", valid: true });
      expect(seen.listed).toContain("Default");
      expect(seen.listed).toContain(`consumer-${label}`);
      expect(seen.listValid).toBe(true);
      expect(seen.connection).toEqual({ id: authConnection.id, domain: authConnection.domain, valid: true });
      expect(seen.tamperedIssues).toEqual(["/health_check_interval minimum"]);
      expect(seen.afterDelete).toBe("404 not_found");
    }, 60_000);

    it("lists a page's WebMCP tool in a browser and invokes it", async () => {
      // Every public package is packed; a missing one is a packing bug, not a reason to skip.
      expect(withHelpers, "@browser-service/webmcp-helpers was not packed").toBe(true);
      const seen = await runProgram(node(), "dist/webmcp.js", label);
      expect(seen.node).toMatch(version);
      expect(seen.tools).toContain("add_numbers");
      expect(seen.pageUrl).toBe(env.CONSUMER_TOOL_PAGE_URL);
      expect(seen.result).toEqual({ status: "completed", output: { sum: 5 } });
    }, 120_000);

    it("runs the browser-service-mcp command: its version, and a refusal of an unknown flag", async () => {
      expect(mcpPackage, "@browser-service/mcp was not packed").toBeDefined();
      const bin = join(project, "node_modules", ".bin", "browser-service-mcp");
      const version = await mustRun(node(), [bin, "--version"], { cwd: project, env });
      expect(version.stdout.trim()).toBe(mcpPackage?.version);
      const refused = await run(node(), [bin, "--no-such-flag"], { cwd: project, env });
      expect(refused.status).toBe(2);
      expect(refused.stderr).toContain("Unknown option '--no-such-flag'");
    }, 60_000);

    it("loads every entry point with require() as with import (ESM only, require(esm))", async () => {
      const specifiers = entrySpecifiers();
      const required = await mustRun(node(), ["entry-points.cjs", ...specifiers], { cwd: project });
      const imported = await mustRun(node(), ["entry-points.mjs", ...specifiers], { cwd: project });
      const exportNames = JSON.parse(imported.stdout);
      expect(Object.keys(exportNames)).toEqual(specifiers);
      expect(JSON.parse(required.stdout)).toEqual(exportNames);
    }, 60_000);
  });
});
