// What a user of the published packages writes: the client against a running service,
// its answers checked with the validators, typed with the types. Prints one JSON line of
// what it saw; anything unexpected throws (exit code 1).
//
//   node dist/core.js <label>   with BROWSER_SERVICE_API_KEY, BROWSER_SERVICE_BASE_URL
//                               and CONSUMER_AUTH_CONNECTION_ID set
import { createClient, NotFoundError } from "@browser-service/client";
import type { BrowserProxyConfig, ManagedAuth, Project } from "@browser-service/types";
import { operationValidators, validateManagedAuth, validateProject } from "@browser-service/validators";

const label = process.argv[2];
const connectionId = process.env["CONSUMER_AUTH_CONNECTION_ID"];
if (!label || !connectionId) throw new Error("usage: CONSUMER_AUTH_CONNECTION_ID=<id> node dist/core.js <label>");

// The published declarations keep "exactly one of" shapes exclusive; if they loosened,
// this line would stop compiling.
// @ts-expect-error a proxy is chosen by mode, id or name, never by two at once
export const twoProxies: BrowserProxyConfig = { mode: "direct", id: "prx_1" };

const client = createClient(); // the key and base URL come from BROWSER_SERVICE_* variables

const created: Project = await client.projects.create({ name: `consumer-${label}` });
const listed: Project[] = [];
for await (const project of client.projects.listAll()) listed.push(project);

const connection: ManagedAuth = await client.authConnections.get(connectionId);
// A record the service would never send: the validators must say what is wrong and where.
const tampered = validateManagedAuth({ ...connection, health_check_interval: 5 });

await client.projects.delete(created.id);
let afterDelete = "still there";
try {
  await client.projects.get(created.id);
} catch (error) {
  if (!(error instanceof NotFoundError)) throw error;
  afterDelete = `${error.status} ${error.code}`;
}

console.log(
  JSON.stringify({
    node: process.version,
    created: { name: created.name, status: created.status, valid: validateProject(created).ok },
    listed: listed.map((project) => project.name),
    listValid: operationValidators.listProjects.responses[200](listed).ok,
    connection: { id: connection.id, domain: connection.domain, valid: validateManagedAuth(connection).ok },
    tamperedIssues: tampered.ok ? [] : tampered.errors.map((issue) => `${issue.pointer} ${issue.rule}`),
    afterDelete,
  }),
);
