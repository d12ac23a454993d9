import type { Exchange } from "./http-exchange.js";
import type { HttpRequest } from "./operation-requests.js";

/** What a race needs: requests sent all at once, and one sent alone. */
export interface RaceContext {
  orgKey: string;
  /** Sends every request at once and returns the answers in order. */
  together(requests: HttpRequest[]): Promise<Exchange[]>;
  /** Sends one request and returns its answer. */
  alone(request: HttpRequest): Promise<Exchange>;
  /** A fresh name for this run. */
  unique(prefix: string): string;
  /** A valid extension archive. */
  zip: Buffer;
}

/** One race: the requests it sent with their answers, and what is wrong with the outcome as a whole. */
export interface RaceResult {
  label: string;
  sent: { request: HttpRequest; answer: Exchange }[];
  problems: string[];
}

/** The same request several times at once: the spec's rules must hold whatever the interleaving. */
export interface Race {
  label: string;
  run(context: RaceContext): Promise<RaceResult>;
}

const COPIES = 8;

const json = (
  context: RaceContext,
  operationId: string,
  method: string,
  target: string,
  body?: unknown,
  headers: Record<string, string> = {},
): HttpRequest => ({
  operationId,
  label: "race",
  method,
  target,
  headers: { authorization: `Bearer ${context.orgKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
  ...(body === undefined ? {} : { body: Buffer.from(JSON.stringify(body)) }),
});

const statusOf = (answer: Exchange) => ("status" in answer ? answer.status : 0);
const count = (answers: Exchange[], status: number) => answers.filter((answer) => statusOf(answer) === status).length;
const idOf = (answer: Exchange) => ("status" in answer ? (JSON.parse(answer.body) as { id: string }).id : "");

/** Exactly one of `answers` is `success`, and every other one of `others`. */
function exactlyOne(answers: Exchange[], success: number, others: readonly number[]): string[] {
  const statuses = answers.map(statusOf);
  const problems: string[] = [];
  if (count(answers, success) !== 1)
    problems.push(`${count(answers, success)} of ${answers.length} got ${success}, expected exactly one (statuses ${statuses.join(", ")})`);
  if (statuses.some((status) => status !== success && !others.includes(status)))
    problems.push(`statuses ${statuses.join(", ")}: only ${success} and ${others.join(", ")} are possible`);
  return problems;
}

async function created(context: RaceContext, name: string): Promise<string> {
  return idOf(await context.alone(json(context, "createProject", "POST", "/org/projects", { name })));
}

/**
 * The races: uniqueness (a name taken once), deletion (a resource deleted once), and the
 * project rules across an asynchronous browser start (a project with a running browser
 * is neither archived nor deleted).
 */
export const RACES: readonly Race[] = [
  {
    label: "the same project name created 8 times at once",
    async run(context) {
      const name = context.unique("race");
      const requests = Array.from({ length: COPIES }, () => json(context, "createProject", "POST", "/org/projects", { name }));
      const answers = await context.together(requests);
      return {
        label: this.label,
        sent: requests.map((request, i) => ({ request, answer: answers[i] as Exchange })),
        problems: exactlyOne(answers, 201, [409]),
      };
    },
  },
  {
    label: "8 projects renamed to one name at once",
    async run(context) {
      const ids = [];
      for (let i = 0; i < COPIES; i++) ids.push(await created(context, context.unique(`race-rename-${i}`)));
      const name = context.unique("race-renamed");
      const requests = ids.map((id) => json(context, "updateProject", "PATCH", `/org/projects/${id}`, { name }));
      const answers = await context.together(requests);
      return {
        label: this.label,
        sent: requests.map((request, i) => ({ request, answer: answers[i] as Exchange })),
        problems: exactlyOne(answers, 200, [409]),
      };
    },
  },
  {
    label: "the same extension name uploaded 8 times at once",
    async run(context) {
      const name = context.unique("race-ext");
      const boundary = "race-boundary";
      const body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\n${name}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.zip"\r\nContent-Type: application/zip\r\n\r\n`,
        ),
        context.zip,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const requests = Array.from(
        { length: COPIES },
        (): HttpRequest => ({
          operationId: "uploadExtension",
          label: "race",
          method: "POST",
          target: "/extensions",
          headers: { authorization: `Bearer ${context.orgKey}`, "content-type": `multipart/form-data; boundary=${boundary}` },
          body,
        }),
      );
      const answers = await context.together(requests);
      return {
        label: this.label,
        sent: requests.map((request, i) => ({ request, answer: answers[i] as Exchange })),
        problems: exactlyOne(answers, 201, [409]),
      };
    },
  },
  {
    label: "one project deleted 8 times at once",
    async run(context) {
      const id = await created(context, context.unique("race-delete"));
      const requests = Array.from({ length: COPIES }, () => json(context, "deleteProject", "DELETE", `/org/projects/${id}`));
      const answers = await context.together(requests);
      return {
        label: this.label,
        sent: requests.map((request, i) => ({ request, answer: answers[i] as Exchange })),
        problems: exactlyOne(answers, 204, [404]),
      };
    },
  },
  {
    label: "one project's cap set to 8 values at once",
    async run(context) {
      const id = await created(context, context.unique("race-cap"));
      const requests = Array.from({ length: COPIES }, (_, i) =>
        json(context, "updateProjectLimits", "PATCH", `/org/projects/${id}/limits`, { max_concurrent_sessions: i + 1 }),
      );
      const answers = await context.together(requests);
      const problems = answers.every((answer) => statusOf(answer) === 200) ? [] : [`statuses ${answers.map(statusOf).join(", ")}, expected 200 each`];
      const after = await context.alone(json(context, "getProjectLimits", "GET", `/org/projects/${id}/limits`));
      const cap = "status" in after ? (JSON.parse(after.body) as { max_concurrent_sessions?: number }).max_concurrent_sessions : undefined;
      if (cap === undefined || cap < 1 || cap > COPIES) problems.push(`the cap reads ${String(cap)}, none of the values sent`);
      return { label: this.label, sent: requests.map((request, i) => ({ request, answer: answers[i] as Exchange })), problems };
    },
  },
  {
    label: "a browser started in a project while the project is archived and deleted",
    async run(context) {
      const id = await created(context, context.unique("race-busy"));
      // One slot at most: every other start is refused before Chromium runs.
      const requests = [
        json(context, "createBrowser", "POST", "/browsers", {}, { "x-service-project-id": id }),
        json(context, "updateProject", "PATCH", `/org/projects/${id}`, { status: "archived" }),
        json(context, "deleteProject", "DELETE", `/org/projects/${id}`),
      ];
      const answers = await context.together(requests);
      const [browser, archived, deleted] = answers.map(statusOf) as [number, number, number];
      const problems: string[] = [];
      // A project with a running browser can be neither archived nor deleted (the spec's Projects tag).
      if (browser === 201 && (archived === 200 || deleted === 204))
        problems.push(`the browser started (201) and the project was ${archived === 200 ? "archived" : "deleted"} too`);
      if (browser === 201) {
        const list = await context.alone(json(context, "listBrowsers", "GET", "/browsers", undefined, { "x-service-project-id": id }));
        for (const row of "status" in list && list.status === 200 ? (JSON.parse(list.body) as { id: string }[]) : []) {
          await context.alone(json(context, "deleteBrowser", "DELETE", `/browsers/${row.id}`, undefined, { "x-service-project-id": id }));
        }
      }
      return { label: this.label, sent: requests.map((request, i) => ({ request, answer: answers[i] as Exchange })), problems };
    },
  },
];
