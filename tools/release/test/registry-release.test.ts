// A release through a real registry, as the root README's "Releasing" section does it:
// on a scratch copy of the repository, `pnpm version-packages`, a commit, then the
// `release` script's publish (`changeset publish`) to a Verdaccio on 127.0.0.1 with a
// token. Then the registry's answer for every package, installs by name into fresh
// projects outside the repository (npm, pnpm, a pnpm workspace) whose READMEs' examples
// run against the reference server they installed, and a second release on top.
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { bumpVersion } from "../src/changesets.mjs";
import { commitAll, git, scratchGitEnv } from "../src/git-repository.mjs";
import { scriptSteps } from "../src/package-scripts.mjs";
import { mustRunInGroup, runInGroup } from "../src/process-group.mjs";
import { type LocalRegistry, startLocalRegistry } from "../src/registry/local-registry.mjs";
import { userEnv } from "../src/run.mjs";
import { copyBuildOutputs, copyWorkingTree, linkWorkspaceDependencies } from "../src/scratch-copy.mjs";
import { readTarball, type TarEntry } from "../src/tarball.mjs";
import { repoRoot, type WorkspacePackage, workspacePackages } from "../src/workspace.mjs";
import { type InstalledServer, startInstalledServer } from "./support/installed-server.js";
import { blockAfter, fencedBlocks, installedReadme, normalizeOutput } from "./support/readme.js";

const publicNames = inject("packed").map((pkg) => pkg.name);
const consumerTemplate = fileURLToPath(new URL("../consumer", import.meta.url));
const rootManifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));
const scope = publicNames[0]!.split("/")[0]!;
const toolchain = ["typescript", "@types/node"].map((name) => `${name}@${rootManifest.devDependencies[name]}`);
const dependencyFields = ["dependencies", "peerDependencies", "optionalDependencies"] as const;
/** The package the second release's changeset names; the fixed group must carry the others along. */
const secondReleaseTarget = publicNames.includes(`${scope}/validators`) ? `${scope}/validators` : publicNames[0]!;

/** A user's shell: no `npm_*` variables from the pnpm running this test, no project chosen. */
const baseEnv: NodeJS.ProcessEnv = { ...userEnv(), NO_COLOR: "1" };
delete baseEnv.BROWSER_SERVICE_PROJECT_ID;
delete baseEnv.BROWSER_SERVICE_API_KEY;
delete baseEnv.BROWSER_SERVICE_BASE_URL;

interface Packument {
  name: string;
  "dist-tags": Record<string, string>;
  versions: Record<string, Record<string, any>>;
}

let tmp: string;
let registry: LocalRegistry | undefined;
let scratch: string;
let firstVersion: string;
let secondVersion: string;
/** Every package of the scratch workspace, read again after each `version-packages`. */
let scratchPackages: WorkspacePackage[] = [];
const servers: InstalledServer[] = [];

/** The registry's answer for a package: its status (404 when it has none) and document. */
async function packument(name: string): Promise<{ status: number; body: Packument }> {
  const response = await fetch(`${registry!.url}${name.replace("/", "%2f")}`, { signal: AbortSignal.timeout(30_000) });
  return { status: response.status, body: (await response.json()) as Packument };
}

/** A published tarball, checked against the integrity the registry lists for it. */
async function tarball(meta: Record<string, any>): Promise<{ entries: Map<string, TarEntry>; integrityMatches: boolean }> {
  const response = await fetch(meta.dist.tarball, { signal: AbortSignal.timeout(60_000) });
  const bytes = Buffer.from(await response.arrayBuffer());
  const integrity = `sha512-${createHash("sha512").update(bytes).digest("base64")}`;
  return { entries: readTarball(bytes), integrityMatches: integrity === meta.dist.integrity };
}

/** What `pnpm publish` writes for an internal dependency declared as `declared`. */
function publishedRange(declared: string, version: string): string {
  if (!declared.startsWith("workspace:")) return declared;
  const spec = declared.slice("workspace:".length);
  return spec === "*" ? version : spec === "^" || spec === "~" ? `${spec}${version}` : spec;
}

/** Every file path an `exports` or `imports` map points at (subpath patterns aside). */
function mapTargets(map: unknown): string[] {
  if (typeof map === "string") return map.includes("*") ? [] : [map.replace(/^\.\//, "")];
  if (typeof map !== "object" || map === null) return [];
  return Object.values(map).flatMap(mapTargets);
}

/** The release path of the README on the scratch copy: version, commit, then the release script's publish. */
async function release(label: string): Promise<void> {
  // The copy has no node_modules of its own: the scripts' tools (changeset) are the repository's.
  const versionEnv = { ...baseEnv, PATH: `${join(repoRoot, "node_modules", ".bin")}${delimiter}${baseEnv.PATH}` };
  await mustRunInGroup("pnpm", ["run", "version-packages"], { cwd: scratch, env: versionEnv, timeoutMs: 180_000 });
  scratchPackages = workspacePackages(scratch);
  commitAll(scratch, `Version packages (${label})`);

  // `pnpm release` is `turbo run build && changeset publish`; the build already ran in
  // the working tree (as the release tests require) and its outputs are in the copy.
  const manifest = JSON.parse(readFileSync(join(scratch, "package.json"), "utf8"));
  const [build, ...publish] = scriptSteps(manifest, "release");
  if (build !== "turbo run build" || publish.length === 0)
    throw new Error(`The release script is no longer "turbo run build && <publish>": ${manifest.scripts.release}`);
  const host = registry!.url.replace(/^http:/, "");
  const npmrc = join(tmp, "publisher.npmrc");
  // The token comes from the environment, as in CI; the user's own ~/.npmrc is never read.
  writeFileSync(npmrc, `${host}:_authToken=\${NPM_TOKEN}\n`);
  const publishEnv = { ...versionEnv, ...scratchGitEnv, npm_config_registry: registry!.url, npm_config_userconfig: npmrc, NPM_TOKEN: registry!.token };
  for (const step of publish) await mustRunInGroup("sh", ["-c", step], { cwd: scratch, env: publishEnv, timeoutMs: 240_000 });
}

/** A fresh folder outside the repository whose npm and pnpm get our scope from the local registry. */
function freshProject(name: string, manifest: Record<string, unknown>): string {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name, version: "1.0.0", private: true, type: "module", ...manifest }, null, 2)}\n`);
  // Only our scope comes from the local registry; everything else from the registry this machine uses.
  writeFileSync(join(dir, ".npmrc"), `${scope}:registry=${registry!.url}\n`);
  return dir;
}

/** The version of each public package installed in `project`. */
function installedVersions(project: string): Record<string, string> {
  return Object.fromEntries(publicNames.map((name) => [name, JSON.parse(readFileSync(join(project, "node_modules", name, "package.json"), "utf8")).version]));
}

/** Runs `node <file>` in `cwd` with the server's key and URL; a failure also shows what the server logged. */
async function runExample(cwd: string, file: string, server: InstalledServer, extraPath = ""): Promise<string> {
  const env = {
    ...baseEnv,
    BROWSER_SERVICE_API_KEY: server.apiKey,
    BROWSER_SERVICE_BASE_URL: server.url,
    PATH: extraPath ? `${extraPath}${delimiter}${baseEnv.PATH}` : baseEnv.PATH,
  };
  const result = await runInGroup(process.execPath, [file], { cwd, env, timeoutMs: 90_000 });
  if (result.status !== 0)
    throw new Error(
      `node ${file} failed (${result.timedOut ? "timed out" : `exit ${result.status ?? result.signal}`}) in ${cwd}:\n${result.stdout}${result.stderr}\nThe server logged:\n${server.output()}`,
    );
  return result.stdout;
}

/** Writes a README's code block into `dir` as `file` and returns the file's name. */
function writeExample(dir: string, file: string, code: string): string {
  writeFileSync(join(dir, file), code);
  return file;
}

/** The README examples that need only Node and the server: openapi, validators, client. */
function plainExamples(project: () => string, server: () => InstalledServer) {
  it("runs the openapi README's example: its first lines are the ones the README shows", async () => {
    const readme = installedReadme(project(), `${scope}/openapi`);
    const stdout = await runExample(project(), writeExample(project(), "openapi-example.mjs", blockAfter(readme, "js", "## Usage")), server());
    const shown = blockAfter(readme, "text", "Output").trimEnd().split("\n");
    expect(stdout.split("\n").slice(0, shown.length)).toEqual(shown);
  }, 120_000);

  it("runs the validators README's example and prints its output", async () => {
    const readme = installedReadme(project(), `${scope}/validators`);
    const stdout = await runExample(project(), writeExample(project(), "validators-example.mjs", blockAfter(readme, "js", "## Usage")), server());
    expect(stdout).toBe(blockAfter(readme, "text", "Output:"));
  }, 120_000);

  it("runs the client README's example against the installed server and prints its output", async () => {
    const readme = installedReadme(project(), `${scope}/client`);
    const stdout = await runExample(project(), writeExample(project(), "client-example.mjs", blockAfter(readme, "js", "## Usage")), server());
    // "Ids, counts and request ids differ from run to run", the README says under its output.
    const counts = (text: string) => normalizeOutput(text).replace(/^(browsers available:) \d+$/m, "$1 N");
    expect(counts(stdout)).toBe(counts(blockAfter(readme, "text", "## Usage")));
  }, 120_000);
}

/** The webmcp-helpers README's example (a browser in the installed server, Chromium). */
function helpersExample(project: () => string, server: () => InstalledServer) {
  it("runs the webmcp-helpers README's example in a browser of the installed server and prints its output", async () => {
    const readme = installedReadme(project(), `${scope}/webmcp-helpers`);
    const stdout = await runExample(project(), writeExample(project(), "helpers-example.mjs", blockAfter(readme, "js", "## Usage")), server());
    expect(normalizeOutput(stdout)).toBe(normalizeOutput(blockAfter(readme, "text", "Its output")));
  }, 120_000);
}

/** The published declarations under the module resolutions a TypeScript user picks from. */
function typeChecks(project: () => string, resolutions: string[]) {
  it.each(resolutions)(
    "type-checks the consumer and the types README's examples with moduleResolution %s",
    async (resolution) => {
      const tsc = join(project(), "node_modules", "typescript", "bin", "tsc");
      const result = await runInGroup(process.execPath, [tsc, "-p", `tsconfig.${resolution}.json`], { cwd: project(), env: baseEnv, timeoutMs: 120_000 });
      expect(result.status, `tsc -p tsconfig.${resolution}.json in ${project()}:\n${result.stdout}${result.stderr}`).toBe(0);
    },
    150_000,
  );
}

/**
 * The consumer of tools/release/consumer (strict TypeScript over every package) and the
 * types README's code blocks, copied into `dir`, whose package.json stays its own.
 */
function addTypeScriptConsumer(dir: string) {
  cpSync(join(consumerTemplate, "src"), join(dir, "src"), { recursive: true });
  for (const config of ["tsconfig.json", "tsconfig.node16.json", "tsconfig.bundler.json"]) cpSync(join(consumerTemplate, config), join(dir, config));
  fencedBlocks(installedReadme(dir, `${scope}/types`), "ts").forEach((code, index) => writeFileSync(join(dir, "src", `types-readme-${index + 1}.ts`), code));
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "browser-service-registry-"));
  if (!relative(repoRoot, tmp).startsWith("..")) throw new Error(`${tmp} is inside the workspace; set TMPDIR to a folder outside it.`);
  mkdirSync(join(tmp, "registry"));
  registry = await startLocalRegistry(join(tmp, "registry"));

  scratch = join(tmp, "repository");
  copyWorkingTree(repoRoot, scratch);
  const before = workspacePackages(scratch);
  copyBuildOutputs(
    repoRoot,
    scratch,
    before.filter((pkg) => pkg.manifest.private !== true),
  );
  linkWorkspaceDependencies(before);
  await release("first");
  firstVersion = scratchPackages.find((pkg) => pkg.name === publicNames[0])!.manifest.version;
}, 420_000);

afterAll(async () => {
  // Every server and the registry stop, whatever failed; then nothing of the run is left.
  await Promise.allSettled(servers.map((server) => server.stop()));
  await registry?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}, 60_000);

describe("the first release, as the registry answers it", () => {
  it("publishes every public package at one version, tagged latest", async () => {
    const seen: Record<string, { versions: string[]; latest: string | undefined }> = {};
    for (const name of publicNames) {
      const { body } = await packument(name);
      seen[name] = { versions: Object.keys(body.versions ?? {}), latest: body["dist-tags"]?.latest };
    }
    const publicScratch = scratchPackages.filter((pkg) => pkg.manifest.private !== true);
    expect(publicScratch.map((pkg) => pkg.manifest.version)).toEqual(publicScratch.map(() => firstVersion));
    expect(seen).toEqual(Object.fromEntries(publicNames.map((name) => [name, { versions: [firstVersion], latest: firstVersion }])));
  });

  // One test per package listing all its problems, like manifests.test.ts, so a new package shows at once what it lacks.
  it.each(publicNames)("%s: manifest and tarball as published", async (name) => {
    const pkg = scratchPackages.find((candidate) => candidate.name === name)!;
    const { body } = await packument(name);
    const meta = body.versions[firstVersion]!;
    const { entries, integrityMatches } = await tarball(meta);
    const files = [...entries.keys()];
    const problems: string[] = [];
    const check = (ok: unknown, problem: string) => {
      if (!ok) problems.push(problem);
    };

    check(integrityMatches, `the tarball does not match dist.integrity ${meta.dist.integrity}`);
    check(String(meta.dist.tarball).startsWith(registry!.url), `dist.tarball ${meta.dist.tarball} is not on the local registry`);
    check(
      JSON.parse(entries.get("package.json")?.content.toString("utf8") ?? "{}").version === firstVersion,
      `package/package.json in the tarball is not version ${firstVersion}`,
    );
    for (const field of ["exports", "imports", "files", "license", "repository", "type", "sideEffects"]) {
      check(
        JSON.stringify(meta[field]) === JSON.stringify(pkg.manifest[field]),
        `"${field}" is ${JSON.stringify(meta[field])}, the repository says ${JSON.stringify(pkg.manifest[field])}`,
      );
    }
    // Publishing normalizes bin paths (`./bin/x.mjs` becomes `bin/x.mjs`); the commands and files must stay.
    const binPaths = (bin: Record<string, string> | undefined) =>
      JSON.stringify(Object.entries(bin ?? {}).map(([command, path]) => [command, path.replace(/^\.\//, "")]));
    check(binPaths(meta.bin) === binPaths(pkg.manifest.bin), `"bin" is ${JSON.stringify(meta.bin)}, the repository says ${JSON.stringify(pkg.manifest.bin)}`);
    check(meta.license === "MIT", `"license" is ${JSON.stringify(meta.license)}`);
    check(meta.repository?.directory === pkg.relativeDir, `"repository.directory" is ${JSON.stringify(meta.repository?.directory)}, not ${pkg.relativeDir}`);
    check(
      JSON.stringify(meta.engines) === JSON.stringify(rootManifest.engines),
      `"engines" is ${JSON.stringify(meta.engines)}, not the repository's ${JSON.stringify(rootManifest.engines)}`,
    );

    for (const entry of meta.files ?? [])
      check(
        files.some((file) => file === entry || file.startsWith(`${entry}/`)),
        `"files" lists ${entry}, which is not in the tarball`,
      );
    for (const target of [
      ...mapTargets(meta.exports),
      ...mapTargets(meta.imports),
      ...[meta.main, meta.types].filter(Boolean).map((path: string) => path.replace(/^\.\//, "")),
    ]) {
      check(entries.has(target), `${target} (exports, imports, main or types) is not in the tarball`);
    }
    for (const [command, path] of Object.entries<string>(meta.bin ?? {})) {
      const entry = entries.get(path.replace(/^\.\//, ""));
      check(entry, `bin ${command} (${path}) is not in the tarball`);
      if (!entry) continue;
      check((entry.mode & 0o111) === 0o111, `bin ${command} (${path}) has mode ${entry.mode.toString(8)}, not executable by all`);
      check(entry.content.toString("utf8").startsWith("#!/usr/bin/env node\n"), `bin ${command} (${path}) does not start with #!/usr/bin/env node`);
    }

    for (const field of [...dependencyFields, "devDependencies"] as const) {
      for (const [dependency, range] of Object.entries<string>(meta[field] ?? {})) {
        check(!/^(workspace|link|file|catalog|portal):/.test(range), `${field}.${dependency} is published as ${range}`);
      }
    }
    for (const field of dependencyFields) {
      for (const [dependency, declared] of Object.entries<string>(pkg.manifest[field] ?? {})) {
        if (!publicNames.includes(dependency)) continue;
        const expected = publishedRange(declared, firstVersion);
        check(meta[field]?.[dependency] === expected, `${field}.${dependency} is ${meta[field]?.[dependency]}, expected ${expected} (declared ${declared})`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("publishes no private workspace package: the registry has none of them, and lists only the public ones", async () => {
    const privateNames = scratchPackages.filter((pkg) => pkg.manifest.private === true).map((pkg) => pkg.name);
    expect(privateNames.length).toBeGreaterThan(0);
    const statuses = await Promise.all(privateNames.map(async (name) => [name, (await packument(name)).status] as const));
    expect(Object.fromEntries(statuses)).toEqual(Object.fromEntries(privateNames.map((name) => [name, 404])));
    const search = await fetch(`${registry!.url}-/v1/search?text=${encodeURIComponent(scope)}&size=250`, { signal: AbortSignal.timeout(30_000) });
    const found = ((await search.json()) as { objects: { package: { name: string } }[] }).objects.map((object) => object.package.name);
    expect(found.sort()).toEqual([...publicNames].sort());
  });

  it("tags each published package in git, as changesets does, and no private one", () => {
    const tags = git(scratch, ["tag", "--list"]).split("\n").filter(Boolean).sort();
    expect(tags).toEqual(publicNames.map((name) => `${name}@${firstVersion}`).sort());
  });
});

describe("installed by name with npm", () => {
  let project = "";
  let server: InstalledServer;

  beforeAll(async () => {
    project = freshProject("npm-consumer", {});
    await mustRunInGroup("npm", ["install", "--save-exact", "--no-audit", "--no-fund", ...publicNames, ...toolchain], {
      cwd: project,
      env: baseEnv,
      timeoutMs: 300_000,
    });
    addTypeScriptConsumer(project);
    server = await startInstalledServer("npx", ["browser-service-server"], { cwd: project, env: baseEnv, dataDir: join(tmp, "npm-server-data") });
    servers.push(server);
  }, 360_000);

  afterAll(() => server?.stop(), 30_000);

  it("installs every public package at the first version, from the local registry", async () => {
    expect(installedVersions(project)).toEqual(Object.fromEntries(publicNames.map((name) => [name, firstVersion])));
    const lock = JSON.parse(readFileSync(join(project, "package-lock.json"), "utf8"));
    const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8"));
    // --save-exact pins the first release, which the second release below must not disturb.
    expect(publicNames.map((name) => manifest.dependencies[name])).toEqual(publicNames.map(() => firstVersion));
    // The lockfile's integrity is that of the tarballs the local registry serves.
    const published = await Promise.all(publicNames.map(async (name) => (await packument(name)).body.versions[firstVersion]?.dist.integrity));
    expect(publicNames.map((name) => lock.packages[`node_modules/${name}`]?.integrity)).toEqual(published);
  });

  it("starts the installed server with `npx browser-service-server`, as its README says", () => {
    const readme = installedReadme(project, `${scope}/server`);
    expect(blockAfter(readme, "sh", "## Usage")).toMatch(/^npx browser-service-server\b/m);
    expect(server.output()).toContain(`First start in ${join(tmp, "npm-server-data")}`);
  });

  plainExamples(
    () => project,
    () => server,
  );
  helpersExample(
    () => project,
    () => server,
  );

  it("runs the mcp README's worked example: the SDK's client starts the installed browser-service-mcp", async () => {
    const readme = installedReadme(project, `${scope}/mcp`);
    const stdout = await runExample(
      project,
      writeExample(project, "mcp-example.mjs", blockAfter(readme, "js", "## Worked example")),
      server,
      join(project, "node_modules", ".bin"),
    );
    expect(normalizeOutput(stdout)).toBe(normalizeOutput(blockAfter(readme, "text", "Its output")));
  }, 120_000);

  it("runs `npx @browser-service/mcp --help`, which lists every flag the README uses", async () => {
    const result = await mustRunInGroup("npx", [`${scope}/mcp`, "--help"], { cwd: project, env: baseEnv, timeoutMs: 60_000 });
    const readme = installedReadme(project, `${scope}/mcp`);
    // The flags on the README's command lines and in its clients' `args` (not the server's, which it also names).
    const commandLines = ["sh", "json", "js"]
      .flatMap((language) => fencedBlocks(readme, language))
      .flatMap((block) => block.split("\n"))
      .filter((line) => /browser-service-mcp|@browser-service\/mcp|\bargs\b/.test(line));
    const flags = [...new Set(commandLines.flatMap((line) => line.match(/--[a-z][a-z-]*/g) ?? []))].filter((flag) => flag !== "--help");
    expect(flags.length).toBeGreaterThan(0);
    expect(result.stdout).toMatch(/^browser-service-mcp: /);
    expect(flags.filter((flag) => !result.stdout.includes(flag))).toEqual([]);
  }, 90_000);

  typeChecks(() => project, ["node16", "bundler"]);
});

describe("run without installing: `npx -y @browser-service/mcp --help` in an empty folder", () => {
  it("fetches the package from the registry and prints its help", async () => {
    const empty = freshProject("npx-only", {});
    rmSync(join(empty, "package.json"));
    // A cache of its own: npx keeps what it installed there, and a cache shared with
    // earlier runs could hold an older build of the same version.
    const env = { ...baseEnv, npm_config_cache: join(tmp, "npx-cache") };
    const result = await mustRunInGroup("npx", ["-y", `${scope}/mcp`, "--help"], { cwd: empty, env, timeoutMs: 240_000 });
    expect(result.stdout).toMatch(/^browser-service-mcp: /);
    expect(result.stdout).toContain("--start-url");
  }, 300_000);
});

describe("installed by name with pnpm", () => {
  let project = "";
  let server: InstalledServer;

  beforeAll(async () => {
    project = freshProject("pnpm-consumer", { packageManager: rootManifest.packageManager });
    await mustRunInGroup("pnpm", ["add", "--save-exact", ...publicNames], { cwd: project, env: baseEnv, timeoutMs: 300_000 });
    server = await startInstalledServer("pnpm", ["exec", "browser-service-server"], { cwd: project, env: baseEnv, dataDir: join(tmp, "pnpm-server-data") });
    servers.push(server);
  }, 360_000);

  afterAll(() => server?.stop(), 30_000);

  it("installs every public package at the first version, from the local registry", () => {
    expect(installedVersions(project)).toEqual(Object.fromEntries(publicNames.map((name) => [name, firstVersion])));
  });

  plainExamples(
    () => project,
    () => server,
  );

  it("runs `pnpm exec browser-service-mcp --help`", async () => {
    const result = await mustRunInGroup("pnpm", ["exec", "browser-service-mcp", "--help"], { cwd: project, env: baseEnv, timeoutMs: 60_000 });
    expect(result.stdout).toMatch(/^browser-service-mcp: /);
  }, 90_000);
});

describe("installed by name in a pnpm workspace, by one of its packages", () => {
  let root = "";
  let agent = "";
  let server: InstalledServer;

  beforeAll(async () => {
    root = freshProject("pnpm-workspace", { packageManager: rootManifest.packageManager });
    writeFileSync(join(root, "pnpm-workspace.yaml"), "packages:\n  - apps/*\n");
    agent = join(root, "apps", "agent");
    mkdirSync(agent, { recursive: true });
    writeFileSync(join(agent, "package.json"), `${JSON.stringify({ name: "agent", version: "1.0.0", private: true, type: "module" }, null, 2)}\n`);
    const runtime = [`${scope}/client`, `${scope}/types`, `${scope}/validators`, `${scope}/webmcp-helpers`, `${scope}/openapi`].filter((name) =>
      publicNames.includes(name),
    );
    await mustRunInGroup("pnpm", ["--filter", "agent", "add", "--save-exact", ...runtime], { cwd: root, env: baseEnv, timeoutMs: 300_000 });
    await mustRunInGroup("pnpm", ["--filter", "agent", "add", "--save-dev", "--save-exact", `${scope}/server`, ...toolchain], {
      cwd: root,
      env: baseEnv,
      timeoutMs: 300_000,
    });
    addTypeScriptConsumer(agent);
    server = await startInstalledServer("pnpm", ["exec", "browser-service-server"], { cwd: agent, env: baseEnv, dataDir: join(tmp, "workspace-server-data") });
    servers.push(server);
  }, 480_000);

  afterAll(() => server?.stop(), 30_000);

  it("records the first version in the package's manifest and the workspace's lockfile", () => {
    const manifest = JSON.parse(readFileSync(join(agent, "package.json"), "utf8"));
    expect(manifest.dependencies[`${scope}/client`]).toBe(firstVersion);
    expect(manifest.devDependencies[`${scope}/server`]).toBe(firstVersion);
    expect(readFileSync(join(root, "pnpm-lock.yaml"), "utf8")).toContain(`'${scope}/client@${firstVersion}'`);
  });

  plainExamples(
    () => agent,
    () => server,
  );
  helpersExample(
    () => agent,
    () => server,
  );
  // An app in a workspace is usually bundled; node16 ran on the npm project above.
  typeChecks(() => agent, ["bundler"]);
});

describe("a second release: a changeset for one package", () => {
  beforeAll(async () => {
    writeFileSync(
      join(scratch, ".changeset", "registry-test-second-release.md"),
      `---\n"${secondReleaseTarget}": patch\n---\n\nA second release, from the registry release test.\n`,
    );
    await release("second");
    secondVersion = bumpVersion(firstVersion, "patch");
  }, 420_000);

  it("moves every public package of the fixed group to the next version, tagged latest", async () => {
    const seen: Record<string, { versions: string[]; latest: string | undefined }> = {};
    for (const name of publicNames) {
      const { body } = await packument(name);
      seen[name] = { versions: Object.keys(body.versions).sort(), latest: body["dist-tags"].latest };
    }
    expect(seen).toEqual(Object.fromEntries(publicNames.map((name) => [name, { versions: [firstVersion, secondVersion], latest: secondVersion }])));
  });

  it("publishes internal dependencies of the new version at the new version, and leaves the first version's as they were", async () => {
    const wrong: string[] = [];
    for (const pkg of scratchPackages.filter((candidate) => candidate.manifest.private !== true)) {
      const { body } = await packument(pkg.name);
      for (const field of dependencyFields) {
        for (const [dependency, declared] of Object.entries<string>(pkg.manifest[field] ?? {})) {
          if (!publicNames.includes(dependency)) continue;
          for (const version of [firstVersion, secondVersion]) {
            const published = body.versions[version]?.[field]?.[dependency];
            if (published !== publishedRange(declared, version))
              wrong.push(`${pkg.name}@${version} ${field}.${dependency}: ${published}, expected ${publishedRange(declared, version)}`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("still installs the first release where projects pinned it (npm ci, pnpm install --frozen-lockfile)", async () => {
    const npmProject = join(tmp, "npm-consumer");
    const pnpmProject = join(tmp, "pnpm-consumer");
    for (const project of [npmProject, pnpmProject]) rmSync(join(project, "node_modules"), { recursive: true, force: true });
    await mustRunInGroup("npm", ["ci", "--no-audit", "--no-fund"], { cwd: npmProject, env: baseEnv, timeoutMs: 300_000 });
    await mustRunInGroup("pnpm", ["install", "--frozen-lockfile"], { cwd: pnpmProject, env: baseEnv, timeoutMs: 300_000 });
    const pinned = Object.fromEntries(publicNames.map((name) => [name, firstVersion]));
    expect(installedVersions(npmProject)).toEqual(pinned);
    expect(installedVersions(pnpmProject)).toEqual(pinned);
  }, 600_000);

  it("gives a new project the second release, with our packages it depends on at that version", async () => {
    const project = freshProject("npm-after-second-release", {});
    const helpers = publicNames.includes(`${scope}/webmcp-helpers`) ? `${scope}/webmcp-helpers` : secondReleaseTarget;
    await mustRunInGroup("npm", ["install", "--no-audit", "--no-fund", helpers], { cwd: project, env: baseEnv, timeoutMs: 300_000 });
    const lock = JSON.parse(readFileSync(join(project, "package-lock.json"), "utf8"));
    const ours = Object.entries<{ version: string }>(lock.packages)
      .filter(([path]) => path.startsWith(`node_modules/${scope}/`))
      .map(([path, entry]) => [path.slice("node_modules/".length), entry.version]);
    expect(ours.length).toBeGreaterThan(1);
    expect(Object.fromEntries(ours)).toEqual(Object.fromEntries(ours.map(([name]) => [name, secondVersion])));
  }, 360_000);
});
