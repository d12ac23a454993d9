// deploy/kubernetes/ checked two ways: every document against the Kubernetes API's own
// schemas (kubernetes-models' validators, generated from the API's OpenAPI document), and
// against the server itself: its settings (the manifests' environment is read by the
// server's own parser), the bundled spec's probe paths, and the ports and times that must
// agree between the StatefulSet, its Services and the server's settings.
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { StatefulSet } from "kubernetes-models/apps/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { Namespace, Secret, Service } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { ConfigError, parseCommand, type ServerConfig } from "../../../packages/server/src/app/config.ts";
import { SETTINGS } from "../../../packages/server/src/app/settings.ts";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const dir = join(root, "deploy/kubernetes");
const componentDir = join(dir, "components/per-browser-budgets");

// Manifests are untyped data, read field by field.
type Doc = Record<string, any>;

/**
 * The documents of a YAML file. Kubernetes reads YAML 1.1 (`yes`, `on` and `0755` are a
 * boolean and a number there, strings in 1.2): each file must mean the same under both, so
 * that what this test reads is what the API server gets.
 */
function documents(path: string): Doc[] {
  const text = readFileSync(path, "utf8");
  const read = (version: "1.1" | "1.2") =>
    parseAllDocuments(text, { version }).map((doc) => {
      const problems = [...doc.errors, ...doc.warnings].map((problem) => problem.message);
      if (problems.length > 0) throw new Error(`${path}: ${problems.join("; ")}`);
      return doc.toJS() as Doc;
    });
  const docs = read("1.1");
  expect(read("1.2"), `${path} means the same in YAML 1.1 and 1.2`).toEqual(docs);
  return docs.filter((doc) => doc !== null);
}

const one = (path: string): Doc => {
  const docs = documents(path);
  expect(docs, path).toHaveLength(1);
  return docs[0]!;
};

const kustomization = one(join(dir, "kustomization.yaml"));
const resources: Doc[] = (kustomization.resources as string[]).flatMap((file) => documents(join(dir, file)));
const secretExample = one(join(dir, "secret.example.yaml"));
const ofKind = (docs: Doc[], kind: string): Doc[] => docs.filter((doc) => doc.kind === kind);
const statefulSet = ofKind(resources, "StatefulSet")[0]!;
const services = ofKind(resources, "Service");
const apiService = services.find((service) => service.spec.clusterIP !== "None")!;
const nodesService = services.find((service) => service.spec.clusterIP === "None")!;
const pdb = ofKind(resources, "PodDisruptionBudget")[0]!;

// The Kubernetes schemas, by apiVersion and kind: a document of any other kind fails below
// until it is added here.
const MODELS: Record<string, new (data: Doc) => { validate(): void }> = {
  "v1/Namespace": Namespace,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "apps/v1/StatefulSet": StatefulSet,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
};

function validate(doc: Doc): void {
  const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
  if (Model === undefined) throw new Error(`no schema here for ${doc.apiVersion} ${doc.kind}`);
  new Model(structuredClone(doc)).validate();
}

type PatchOp = { op: "add" | "remove" | "replace" | "test"; path: string; value?: unknown };

/** RFC 6902, as kustomize applies a component's patch: a failed `test` or a missing path is an error. */
function applyPatch(doc: Doc, ops: PatchOp[]): Doc {
  const out = structuredClone(doc);
  for (const op of ops) {
    const keys = op.path
      .split("/")
      .slice(1)
      .map((key) => key.replaceAll("~1", "/").replaceAll("~0", "~"));
    const last = keys.pop()!;
    let parent: Doc = out;
    for (const key of keys) {
      parent = parent[key];
      if (parent === undefined || parent === null) throw new Error(`${op.op} ${op.path}: no such path`);
    }
    const exists = Array.isArray(parent) ? Number(last) < parent.length : Object.hasOwn(parent, last);
    if (op.op !== "add" && !exists) throw new Error(`${op.op} ${op.path}: no such path`);
    if (op.op === "test" && !isDeepStrictEqual(parent[last], op.value)) {
      throw new Error(`test ${op.path}: it is ${JSON.stringify(parent[last])}, not ${JSON.stringify(op.value)}`);
    }
    if (op.op === "remove") {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[last];
    }
    if (op.op === "replace") parent[last] = structuredClone(op.value);
    if (op.op === "add") {
      if (Array.isArray(parent)) parent.splice(last === "-" ? parent.length : Number(last), 0, structuredClone(op.value));
      else parent[last] = structuredClone(op.value);
    }
  }
  return out;
}

const component = one(join(componentDir, "kustomization.yaml"));
const componentPatch = component.patches[0];
const budgetsStatefulSet = applyPatch(statefulSet, documents(join(componentDir, componentPatch.path))[0] as unknown as PatchOp[]);

/** Both ways the StatefulSet is deployed: as it is, and with the per-browser-budgets component. */
const VARIANTS: [string, Doc][] = [
  ["the default", statefulSet],
  ["with per-browser budgets", budgetsStatefulSet],
];

// What the downward API gives the pod, for one pod of the StatefulSet.
const POD_NAME = `${statefulSet.metadata.name}-0`;
const POD_IP = "10.244.1.7";
const FIELDS: Record<string, string> = { "metadata.name": POD_NAME, "metadata.namespace": kustomization.namespace, "status.podIP": POD_IP };

// Values of the shape the Secret must hold (made here, never stored).
const SECRET_VALUES: Record<string, string> = {
  BROWSER_SERVICE_DATABASE_URL: "postgres://browser_service:sample@postgres:5432/browser_service",
  BROWSER_SERVICE_NODE_SECRET: randomBytes(36).toString("base64"),
  BROWSER_SERVICE_SECRETS_KEY: randomBytes(32).toString("hex"),
};

const podSpec = (set: Doc): Doc => set.spec.template.spec;
const container = (set: Doc): Doc => podSpec(set).containers[0];

/** The container's environment as the kubelet makes it: downward API fields, Secret keys, `$(NAME)` of earlier variables. */
function environment(set: Doc, secret: Record<string, string> = SECRET_VALUES): Record<string, string> {
  const env: Record<string, string> = {};
  for (const each of container(set).env as Doc[]) {
    let value: string;
    if (typeof each.value === "string") {
      value = each.value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (match: string, name: string | undefined) =>
        name === undefined ? "$" : (env[name] ?? match),
      );
    } else if (each.valueFrom?.fieldRef !== undefined) {
      value = FIELDS[each.valueFrom.fieldRef.fieldPath] as string;
      expect(value, `${each.name}: the downward API field ${each.valueFrom.fieldRef.fieldPath}`).toBeDefined();
    } else if (each.valueFrom?.secretKeyRef !== undefined) {
      expect(each.valueFrom.secretKeyRef.name).toBe(secretExample.metadata.name);
      value = secret[each.valueFrom.secretKeyRef.key] as string;
      expect(value, `${each.name}: the Secret's ${each.valueFrom.secretKeyRef.key}`).toBeDefined();
    } else {
      throw new Error(`${each.name}: a value this test does not know how to read`);
    }
    env[each.name] = value;
  }
  return env;
}

/** What the server makes of the container's command line and environment: its own parser. */
function serverConfig(set: Doc, secret?: Record<string, string>): ServerConfig {
  const command = parseCommand(container(set).args ?? [], environment(set, secret));
  if (command.kind !== "serve") throw new Error(`the container runs \`${command.kind}\`, not the server`);
  return command.config;
}

/** A container port by name (as a probe or a Service's targetPort names it) or number. */
function containerPort(set: Doc, port: string | number): number {
  if (typeof port === "number") return port;
  const found = (container(set).ports as Doc[]).find((each) => each.name === port);
  if (found === undefined) throw new Error(`no container port named ${port}`);
  return found.containerPort;
}

/** A Kubernetes quantity (`10Gi`, `512Mi`, `2`) in bytes or units. */
function quantity(text: string | number): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(text));
  if (match === null) throw new Error(`not a quantity this test reads: ${text}`);
  const scale: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Number(match[1]) * (match[2] === undefined ? 1 : (scale[match[2]] as number));
}

const subsetOf = (labels: Record<string, string>, of: Record<string, string>) =>
  Object.entries(labels).every(([key, value]) => of[key] === value) && Object.keys(labels).length > 0;

describe("deploy/kubernetes against the Kubernetes schemas", () => {
  it("validates every document kustomization.yaml lists, the example Secret and the StatefulSet with the component", () => {
    expect(resources.map((doc) => doc.kind).sort()).toEqual(["Namespace", "PodDisruptionBudget", "Service", "Service", "StatefulSet"]);
    for (const doc of [...resources, secretExample, budgetsStatefulSet]) expect(() => validate(doc), `${doc.kind} ${doc.metadata?.name}`).not.toThrow();
  });

  const broken: [string, Doc, (doc: Doc) => void][] = [
    ["a container port written as a string", statefulSet, (doc) => (container(doc).ports[0].containerPort = "8787")],
    ["an environment value written as a number (an unquoted 8787)", statefulSet, (doc) => (container(doc).env[3].value = 8787)],
    ["a StatefulSet without its selector", statefulSet, (doc) => delete doc.spec.selector],
    ["a container without its name", statefulSet, (doc) => delete container(doc).name],
    ["a Service port's protocol that is not TCP, UDP or SCTP", apiService, (doc) => (doc.spec.ports[0].protocol = "HTTP")],
    ["a PodDisruptionBudget's maxUnavailable as a list", pdb, (doc) => (doc.spec.maxUnavailable = [1])],
    ["a Secret value that is not a string", secretExample, (doc) => (doc.stringData.BROWSER_SERVICE_NODE_SECRET = true)],
  ];
  it.each(broken)("refuses a copy with %s", (_, doc, breakIt) => {
    const copy = structuredClone(doc);
    breakIt(copy);
    expect(() => validate(copy)).toThrow();
  });
});

describe("deploy/kubernetes against the server", () => {
  const settingEnvs = new Set<string>(SETTINGS.map((each) => each.env));

  it("names only environment variables the server has (or helpers another value uses)", () => {
    for (const [, set] of VARIANTS) {
      expect(container(set).envFrom).toBeUndefined();
      const env = container(set).env as Doc[];
      const referenced = env.flatMap((each) => [...String(each.value ?? "").matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)].map((match) => match[1]));
      for (const each of env) {
        if (each.name.startsWith("BROWSER_SERVICE_")) expect(settingEnvs, each.name).toContain(each.name);
        else expect(referenced, `${each.name} is neither a setting nor used by one`).toContain(each.name);
      }
      expect(new Set(env.map((each) => each.name)).size, "no variable twice").toBe(env.length);
    }
    for (const key of Object.keys(secretExample.stringData)) expect(settingEnvs, key).toContain(key);
  });

  it("has the example Secret hold exactly the keys the StatefulSet reads, each a placeholder the server refuses", () => {
    const read = (container(statefulSet).env as Doc[]).flatMap((each) => each.valueFrom?.secretKeyRef?.key ?? []);
    expect(Object.keys(secretExample.stringData).sort()).toEqual(read.sort());
    expect(Object.keys(SECRET_VALUES).sort()).toEqual(read.sort());
    for (const [key, placeholder] of Object.entries(secretExample.stringData as Record<string, string>)) {
      expect(placeholder, key).toMatch(/REPLACE-ME/);
      expect(() => serverConfig(statefulSet, { ...SECRET_VALUES, [key]: placeholder }), `${key} = ${placeholder}`).toThrow(ConfigError);
    }
  });

  it.each(VARIANTS)("is read by the server's own parser as a node of the shared database (%s)", (_, set) => {
    const config = serverConfig(set);
    expect(config.host).toBe("0.0.0.0");
    expect(config.database).toBe(SECRET_VALUES.BROWSER_SERVICE_DATABASE_URL);
    expect(config.nodeSecret).toBe(SECRET_VALUES.BROWSER_SERVICE_NODE_SECRET);
    expect(config.secretsKey).toBe(SECRET_VALUES.BROWSER_SERVICE_SECRETS_KEY);
    // The node id is the pod's name, which a StatefulSet keeps across restarts.
    expect(set.kind).toBe("StatefulSet");
    expect(config.nodeId).toBe(POD_NAME);
    expect(config.advertiseUrl).toBe(`http://${POD_IP}:${config.port}`);
    expect(config.unsafeNoSandbox).toBe(false);
    expect(config.allowPrivateNetwork).toBe(false);
  });

  it("runs browsers without their own budget only in the default, which the component turns back on", () => {
    expect(serverConfig(statefulSet).unsafeNoResourceLimits).toBe(true);
    expect(serverConfig(budgetsStatefulSet).unsafeNoResourceLimits).toBe(false);
    expect(container(budgetsStatefulSet).env).toHaveLength(container(statefulSet).env.length - 1);
  });

  it.each(VARIANTS)("listens where the container, the probes and the Services say (%s)", (_, set) => {
    const config = serverConfig(set);
    expect(containerPort(set, "http")).toBe(config.port);
    expect(containerPort(set, "metrics")).toBe(config.metricsPort);
    expect(config.metricsPort).toBeGreaterThan(0);
    expect(config.metricsPort).not.toBe(config.port);
    expect(config.metricsHost).toBe("0.0.0.0");
    for (const port of apiService.spec.ports as Doc[]) expect(containerPort(set, port.targetPort)).toBe(config.port);
    expect((apiService.spec.ports as Doc[]).map((port) => port.name)).not.toContain("metrics");
    const metrics = (nodesService.spec.ports as Doc[]).find((port) => port.name === "metrics")!;
    expect(metrics.port).toBe(config.metricsPort);
    expect(containerPort(set, metrics.targetPort)).toBe(config.metricsPort);
    for (const annotations of [nodesService.metadata.annotations, set.spec.template.metadata.annotations]) {
      expect(annotations["prometheus.io/scrape"]).toBe("true");
      expect(annotations["prometheus.io/port"]).toBe(String(config.metricsPort));
      expect(annotations["prometheus.io/path"]).toBe("/metrics");
    }
    for (const probe of ["startupProbe", "livenessProbe", "readinessProbe"]) {
      expect(containerPort(set, container(set)[probe].httpGet.port), probe).toBe(config.port);
    }
  });

  it("probes paths of the bundled spec that take no credential: /healthz for liveness, /readyz for readiness", () => {
    const spec = documents(join(root, "spec/dist/openapi.yaml"))[0]!;
    const probes = { startupProbe: "/healthz", livenessProbe: "/healthz", readinessProbe: "/readyz" };
    for (const [probe, path] of Object.entries(probes)) {
      expect(container(statefulSet)[probe].httpGet.path, probe).toBe(path);
      expect(spec.paths[path]?.get, `GET ${path} in spec/dist/openapi.yaml`).toBeDefined();
      expect(spec.paths[path].get.security, `GET ${path} takes no credential`).toEqual([]);
    }
  });

  it.each(VARIANTS)("gives the drain time to finish before Kubernetes kills the server (%s)", (_, set) => {
    const config = serverConfig(set);
    expect(config.drainSeconds).toBeGreaterThan(0);
    // After the drain the server ends the browsers left and its connections, within about 10 s (the server's README).
    expect(podSpec(set).terminationGracePeriodSeconds).toBeGreaterThan(config.drainSeconds + 10);
  });

  it.each(VARIANTS)("holds at least one browser at its full budget in the pod's memory, reserved whole (%s)", (_, set) => {
    const { requests, limits } = container(set).resources;
    expect(quantity(requests.memory)).toBe(quantity(limits.memory));
    expect(quantity(limits.memory)).toBeGreaterThanOrEqual(serverConfig(set).browserMemoryBytes + 2 ** 30);
    expect(quantity(requests.cpu)).toBeLessThanOrEqual(quantity(limits.cpu));
  });

  it.each(VARIANTS)("keeps its data directory and temporary files on the pod's volumes (%s)", (_, set) => {
    const config = serverConfig(set);
    const mounts = (container(set).volumeMounts as Doc[]).map((mount) => mount.mountPath as string);
    const volumes = (podSpec(set).volumes as Doc[]).map((volume) => volume.name);
    for (const mount of container(set).volumeMounts as Doc[]) expect(volumes).toContain(mount.name);
    // Inside a mount, not the mount itself: the server sets its data directory's mode, which only its owner may.
    expect(mounts.some((mount) => config.dataDir.startsWith(`${mount}/`))).toBe(true);
    if (container(set).securityContext.readOnlyRootFilesystem === true) expect(mounts).toContain("/tmp");
  });
});

describe("deploy/kubernetes's rules the schemas do not carry", () => {
  it.each(VARIANTS)("sets a security context the API server accepts and the sandbox can run in (%s)", (_, set) => {
    const pod = podSpec(set);
    const context = { ...pod.securityContext, ...container(set).securityContext };
    // The API server refuses Unmasked without a user namespace, and privileged with no privilege escalation.
    if (context.procMount === "Unmasked") expect(pod.hostUsers).toBe(false);
    if (context.privileged === true) expect(context.allowPrivilegeEscalation).not.toBe(false);
    if (context.runAsNonRoot === true) expect(context.runAsUser).not.toBe(0);
    if (pod.hostUsers === false) {
      // A user-namespaced pod maps ids 0-65535; a root server would give browsers ids from --sandbox-uid-base.
      expect(context.runAsUser).toBeGreaterThan(0);
      expect(context.runAsUser).toBeLessThan(65536);
    }
    // bubblewrap unshares user namespaces and mounts a fresh /proc: neither works in the default seccomp profile and masked /proc.
    if (context.privileged !== true) {
      expect(["Unconfined", "Localhost"]).toContain(context.seccompProfile?.type);
      expect(context.procMount).toBe("Unmasked");
    }
    expect(pod.enableServiceLinks, "a Service named browser-service would set BROWSER_SERVICE_PORT=tcp://...").toBe(false);
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it("applies the component's patch only to the StatefulSet it was written for", () => {
    expect(component.kind).toBe("Component");
    expect(component.patches).toHaveLength(1);
    expect(componentPatch.target).toMatchObject({ kind: statefulSet.kind, name: statefulSet.metadata.name });
    expect(container(budgetsStatefulSet).securityContext.privileged).toBe(true);
    expect(podSpec(budgetsStatefulSet).hostUsers).toBeUndefined();
    // A `test` that no longer holds stops the patch, as it stops kustomize.
    const moved = structuredClone(statefulSet);
    container(moved).env.reverse();
    expect(() => applyPatch(moved, documents(join(componentDir, componentPatch.path))[0] as unknown as PatchOp[])).toThrow(/test/);
  });

  it("selects the pods by their labels everywhere, and governs the StatefulSet with the headless Service", () => {
    const labels = statefulSet.spec.template.metadata.labels;
    expect(subsetOf(statefulSet.spec.selector.matchLabels, labels)).toBe(true);
    expect(subsetOf(pdb.spec.selector.matchLabels, labels)).toBe(true);
    for (const service of services) expect(subsetOf(service.spec.selector, labels), service.metadata.name).toBe(true);
    expect(statefulSet.spec.serviceName).toBe(nodesService.metadata.name);
    expect(nodesService.spec.publishNotReadyAddresses).toBe(true);
  });

  it("lists every manifest in kustomization.yaml but the example Secret, and README.md names every file", () => {
    const files = readdirSync(dir).filter((file) => file.endsWith(".yaml"));
    expect(files.filter((file) => !["kustomization.yaml", "secret.example.yaml"].includes(file)).sort()).toEqual([...kustomization.resources].sort());
    expect(kustomization.resources).not.toContain("secret.example.yaml");
    expect(existsSync(join(componentDir, componentPatch.path))).toBe(true);
    const namespaces = ofKind(resources, "Namespace");
    expect(namespaces.map((doc) => doc.metadata.name)).toEqual([kustomization.namespace]);
    expect(kustomization.images.map((image: Doc) => image.name)).toEqual([container(statefulSet).image.split(":")[0]]);
    const readme = readFileSync(join(dir, "README.md"), "utf8");
    for (const file of [...files, "components/per-browser-budgets"]) expect(readme, file).toContain(file);
  });
});
