import fc from "fast-check";
import { type JsonSchema, RawJson, SchemaArbitraries, type SchemaContext, toJson } from "./schema-arbitrary.js";

/** The spec's document, as far as requests are made from it. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
}

/** One operation of the spec, with its parameters resolved. */
export interface SpecOperation {
  operationId: string;
  method: string;
  /** The path template, such as `/org/projects/{id}`. */
  path: string;
  parameters: { name: string; in: "path" | "query" | "header"; required: boolean; schema: JsonSchema }[];
  /** The request body's media type and schema, if the operation takes one, and its own size bound (`x-max-bytes`). */
  body?: { mediaType: string; required: boolean; schema: JsonSchema; maxBytes?: number };
  /** Whether it takes no credential (`security: []`, the health probes): a missing or wrong key is then no error. */
  open?: boolean;
}

/** A value drawn from what exists on the server when the request is sent (ids, names, tool refs). */
export class PoolPick {
  constructor(
    readonly pool: keyof Pools,
    readonly index: number,
  ) {}
}

/** What exists on the server, by kind; refreshed between operations. */
export interface Pools {
  /** Ids and names of projects, archived ones included. */
  projects: string[];
  /** Ids of active projects (for the project header). */
  activeProjectIds: string[];
  browsers: string[];
  authConnections: string[];
  toolRefs: string[];
  /** Ids and names of the default project's extensions, credentials and profiles. */
  extensions: string[];
  credentials: string[];
  profiles: string[];
}

/** How a request authenticates. */
export type AuthChoice = "org" | "scoped" | "none" | "garbage" | "not-bearer";

/** A request body before it is encoded. */
export type BodyPlan =
  | { kind: "none" }
  | { kind: "json"; value: unknown; contentType: string }
  | { kind: "text"; text: string; contentType?: string }
  | { kind: "form"; parts: FormPart[]; contentType?: string }
  | { kind: "bytes"; size: number; contentType: string };

/** One part of a multipart form. */
export interface FormPart {
  name: string;
  /** Text, or for a file part: a real archive, bytes that are not one, nothing, or one byte past the size limit. */
  value: string | "zip" | "junk" | "empty" | "oversized";
  filename?: string;
}

/** A request as generated: what it is meant to test, and values still to be drawn from the pools. */
export interface RequestPlan {
  operationId: string;
  /** `valid`, or what the request breaks (`body /name pattern`, `query limit maximum`, ...). */
  label: string;
  /** The statuses a request that breaks a rule may get; absent for valid requests. */
  expect?: readonly number[];
  pathParams: Record<string, unknown>;
  query: [string, string][];
  headers: Record<string, unknown>;
  body: BodyPlan;
  auth: AuthChoice;
}

/** A request ready to send. */
export interface HttpRequest {
  operationId: string | undefined;
  label: string;
  expect?: readonly number[];
  method: string;
  /** The request target: encoded path and query. */
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** The operations of the bundled spec, with `$ref`s of parameters resolved. */
export function specOperations(spec: OpenApiDocument): SpecOperation[] {
  const resolve = (value: unknown): Record<string, unknown> => {
    const ref = (value as { $ref?: string }).$ref;
    return ref === undefined ? (value as Record<string, unknown>) : resolve(resolvePointer(spec, ref));
  };
  const operations: SpecOperation[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    const shared = ((item.parameters ?? []) as unknown[]).map(resolve);
    for (const [method, value] of Object.entries(item)) {
      const operation = value as { operationId?: string; parameters?: unknown[]; requestBody?: unknown; security?: unknown[] };
      if (typeof operation !== "object" || operation === null || operation.operationId === undefined) continue;
      const parameters = [...shared, ...(operation.parameters ?? []).map(resolve)].map((p) => ({
        name: p.name as string,
        in: p.in as "path" | "query" | "header",
        required: p.required === true,
        schema: p.schema as JsonSchema,
      }));
      let body: SpecOperation["body"];
      if (operation.requestBody !== undefined) {
        const requestBody = resolve(operation.requestBody) as { required?: boolean; content: Record<string, { schema: JsonSchema }> };
        const [mediaType, content] = Object.entries(requestBody.content)[0] as [string, { schema: JsonSchema }];
        const maxBytes = resolve(content.schema)["x-max-bytes"];
        body = { mediaType, required: requestBody.required === true, schema: content.schema, ...(typeof maxBytes === "number" ? { maxBytes } : {}) };
      }
      const open = Array.isArray(operation.security) && operation.security.length === 0;
      operations.push({
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path,
        parameters,
        ...(body ? { body } : {}),
        ...(open ? { open } : {}),
      });
    }
  }
  return operations;
}

/** The value at a local `$ref` (`#/components/...`) of the document. */
export function resolvePointer(spec: OpenApiDocument, ref: string): JsonSchema {
  if (!ref.startsWith("#/")) throw new Error(`Only local $refs are expected in the bundled spec, not ${ref}`);
  let node: unknown = spec;
  for (const part of ref.slice(2).split("/")) node = (node as Record<string, unknown>)[part.replace(/~1/g, "/").replace(/~0/g, "~")];
  if (node === undefined) throw new Error(`The $ref ${ref} points at nothing`);
  return node as JsonSchema;
}

/** Which pool a path parameter's known values come from, by path template and name. */
const PATH_POOLS: Readonly<Record<string, keyof Pools>> = {
  "/org/projects/{id}:id": "projects",
  "/org/projects/{id}/limits:id": "projects",
  "/browsers/{id_or_name}:id_or_name": "browsers",
  "/browsers/{id_or_name}/webmcp/tools:id_or_name": "browsers",
  "/browsers/{id_or_name}/webmcp/invoke:id_or_name": "browsers",
  "/browsers/{id_or_name}/telemetry/events:id_or_name": "browsers",
  "/browsers/{id_or_name}/telemetry/stream:id_or_name": "browsers",
  "/auth/connections/{id}:id": "authConnections",
  "/auth/connections/{id}/login:id": "authConnections",
  "/auth/connections/{id}/submit:id": "authConnections",
  "/auth/connections/{id}/events:id": "authConnections",
  "/auth/connections/{id}/timeline:id": "authConnections",
  "/extensions/{id_or_name}:id_or_name": "extensions",
  "/extensions/{id_or_name}/metadata:id_or_name": "extensions",
  "/credentials/{id_or_name}:id_or_name": "credentials",
  "/credentials/{id_or_name}/totp-code:id_or_name": "credentials",
  "/profiles/{id_or_name}:id_or_name": "profiles",
  "/profiles/{id_or_name}/download:id_or_name": "profiles",
};

// Strings that read as integers to a lax parser but are not plain decimal digits.
const NOT_DECIMAL = [
  "",
  "abc",
  "1.5",
  "5.0",
  "0x10",
  "+5",
  "1e3",
  " 5",
  "5 ",
  "\u0665",
  "\uff15",
  "1_000",
  "0b1",
  "Infinity",
  "NaN",
  "-",
  "1,2",
  "true",
  "[1]",
  "5\u0000",
];

const pick = (pool: keyof Pools) => fc.nat().map((index) => new PoolPick(pool, index));

/** Content types a JSON operation must take as JSON (media types and their parameters are case-insensitive). */
const JSON_TYPES = ["application/json", "application/json; charset=utf-8", "Application/JSON", "application/json;charset=UTF-8"];

/** Bodies that break a rule the spec states in a description (a 400 each). */
export interface ProseRule {
  label: string;
  values: fc.Arbitrary<unknown>;
}

/** The cases of one operation: valid requests, then one case per rule a request can break. */
export interface OperationCases {
  operation: SpecOperation;
  valid: fc.Arbitrary<RequestPlan>;
  invalid: { label: string; plans: fc.Arbitrary<RequestPlan> }[];
}

/** Builds the request cases of every operation from the spec. */
export class RequestFactory {
  readonly #spec: OpenApiDocument;
  readonly #formats: SchemaContext["formats"];
  readonly #overrides: Readonly<Record<string, Readonly<Record<string, fc.Arbitrary<unknown>>>>>;
  readonly #proseRules: Readonly<Record<string, readonly ProseRule[]>>;
  readonly #opaque: Readonly<Record<string, readonly string[]>>;
  readonly #schemas: SchemaArbitraries;

  /**
   * `formats` gives valid strings per `format`; `overrides` gives, by operationId and
   * JSON pointer in its body, values to use instead of the schema's (known tool refs);
   * `proseRules` gives, by operationId, bodies that break a rule the spec states only in
   * a description.
   */
  constructor(
    spec: OpenApiDocument,
    options: {
      formats: SchemaContext["formats"];
      overrides?: Readonly<Record<string, Readonly<Record<string, fc.Arbitrary<unknown>>>>>;
      proseRules?: Readonly<Record<string, readonly ProseRule[]>>;
      /** By operationId, body pointers left to `overrides` and `proseRules` (see {@link SchemaContext.opaque}). */
      opaque?: Readonly<Record<string, readonly string[]>>;
    },
  ) {
    this.#spec = spec;
    this.#formats = options.formats;
    this.#overrides = options.overrides ?? {};
    this.#proseRules = options.proseRules ?? {};
    this.#opaque = options.opaque ?? {};
    this.#schemas = new SchemaArbitraries({ resolve: (ref) => resolvePointer(spec, ref), formats: options.formats });
  }

  #bodySchemas(operationId: string): SchemaArbitraries {
    const overrides = this.#overrides[operationId];
    if (!overrides) return this.#schemas;
    const opaque = new Set(this.#opaque[operationId] ?? []);
    return new SchemaArbitraries({ resolve: (ref) => resolvePointer(this.#spec, ref), formats: this.#formats, overrides, opaque });
  }

  /** Every case of `operation`. */
  casesOf(operation: SpecOperation): OperationCases {
    const schemas = this.#bodySchemas(operation.operationId);
    const pathParams = operation.parameters.filter((p) => p.in === "path");
    const queryParams = operation.parameters.filter((p) => p.in === "query");
    const headerParams = operation.parameters.filter((p) => p.in === "header");

    const validPath = fc.record(Object.fromEntries(pathParams.map((p) => [p.name, this.#validPathValue(operation, p.name, p.schema)])));
    // A `name` filter (listProjects) also gets names that exist, so that it finds something.
    const validQuery = fc
      .record(Object.fromEntries(queryParams.map((p) => [p.name, this.#validParamValue(p.schema, p.name === "name" ? "projects" : undefined)])), {
        requiredKeys: queryParams.filter((p) => p.required).map((p) => p.name),
      })
      // A list parameter is the key repeated, once per value (the form style).
      .map((values) =>
        Object.entries(values).flatMap(([name, value]) =>
          Array.isArray(value) ? value.map((item) => [name, String(item)] as [string, string]) : [[name, String(value)] as [string, string]],
        ),
      );
    // The project header: absent, an active project, or any value the schema allows (mostly unknown ids: 404).
    const validHeaders = fc.record(
      Object.fromEntries(
        headerParams.map((p) => [p.name, fc.oneof({ weight: 2, arbitrary: pick("activeProjectIds") }, { weight: 1, arbitrary: headerValues(p.schema) })]),
      ),
      { requiredKeys: headerParams.filter((p) => p.required).map((p) => p.name) },
    );
    // Requests that break a rule send no project header: an unknown or just archived project would be 404 first.
    const quietHeaders = fc.constant({});
    const validBody = this.#validBody(operation, schemas);
    const plan = (parts: {
      label?: string;
      expect?: readonly number[];
      pathParams?: fc.Arbitrary<Record<string, unknown>>;
      query?: fc.Arbitrary<[string, string][]>;
      headers?: fc.Arbitrary<Record<string, unknown>>;
      body?: fc.Arbitrary<BodyPlan>;
      auth?: fc.Arbitrary<AuthChoice>;
    }): fc.Arbitrary<RequestPlan> =>
      fc
        .record({
          pathParams: parts.pathParams ?? validPath,
          query: parts.query ?? validQuery,
          headers: parts.headers ?? (parts.label === undefined ? validHeaders : quietHeaders),
          body: parts.body ?? validBody,
          auth:
            parts.auth ??
            (parts.label === undefined
              ? fc.oneof({ weight: 6, arbitrary: fc.constant<AuthChoice>("org") }, { weight: 1, arbitrary: fc.constant<AuthChoice>("scoped") })
              : fc.constant<AuthChoice>("org")),
        })
        .map((values) => ({ operationId: operation.operationId, label: parts.label ?? "valid", ...(parts.expect ? { expect: parts.expect } : {}), ...values }));

    const invalid: OperationCases["invalid"] = [];
    const add = (label: string, expect: readonly number[], parts: Parameters<typeof plan>[0]) =>
      invalid.push({ label, plans: plan({ ...parts, label, expect }) });

    // An operation that takes no credential answers whatever one says.
    const unauthorized = operation.open === true ? [200, 503] : [401];
    add("auth none", unauthorized, { auth: fc.constant("none") });
    add("auth unknown key", unauthorized, { auth: fc.constant("garbage") });
    add("auth not bearer", unauthorized, { auth: fc.constant("not-bearer") });

    for (const p of pathParams) {
      for (const [rule, values] of this.#stringParamViolations(p.schema)) {
        // An empty segment may match another path (404 or 405); a segment past Node's header limit is 431.
        const expect = rule === "minLength" ? [400, 404, 405] : [400, 431];
        add(`path ${p.name} ${rule}`, expect, { pathParams: fc.tuple(validPath, values).map(([path, value]) => ({ ...path, [p.name]: value })) });
      }
      // A lone surrogate has no UTF-8 form: sent as a lax encoder writes it, the path is not valid percent-encoded UTF-8.
      add(`path ${p.name} not UTF-8`, [400], {
        pathParams: fc.tuple(validPath, fc.constantFrom("\ud800", "a\udfff", "\udbff\ud800")).map(([path, value]) => ({ ...path, [p.name]: value })),
      });
    }
    for (const p of queryParams) {
      const others = validQuery.map((query) => query.filter(([name]) => name !== p.name));
      if (p.schema.type === "array") {
        // A list: one value past its most, and one value its items refuse.
        const item = this.#validParamValue(p.schema.items as JsonSchema);
        const most = typeof p.schema.maxItems === "number" ? p.schema.maxItems : 100;
        add(`query ${p.name} maxItems`, [400, 431], {
          query: fc
            .tuple(others, fc.array(item, { minLength: most + 1, maxLength: most + 1 }))
            .map(([query, items]) => [...query, ...items.map((value) => [p.name, String(value)] as [string, string])]),
        });
        add(`query ${p.name} item`, [400], {
          query: fc.tuple(others, fc.constantFrom("", "Console", "no such value", "a b")).map(([query, value]) => [...query, [p.name, value]]),
        });
        continue;
      }
      const violations = p.schema.type === "integer" ? integerParamViolations(p.schema) : this.#stringParamViolations(p.schema);
      for (const [rule, values] of violations)
        add(`query ${p.name} ${rule}`, rule === "maxLength" ? [400, 431] : [400], {
          query: fc.tuple(others, values).map(([query, value]) => [...query, [p.name, value]]),
        });
      add(`query ${p.name} repeated`, [400], {
        query: fc
          .tuple(others, this.#validParamValue(p.schema), this.#validParamValue(p.schema))
          .map(([query, a, b]) => [...query, [p.name, String(a)], [p.name, String(b)]]),
      });
    }
    add("query unknown parameter", [400], {
      query: fc
        .tuple(validQuery, fc.constantFrom("foo", "Offset", "LIMIT", "__proto__", "constructor", "project_id", ""))
        .map(([query, name]) => [...query, [name, "1"]]),
    });
    for (const p of headerParams) {
      // An empty or overlong project header names no project: the header check (404) may answer before validation (400).
      for (const [rule, values] of this.#stringParamViolations(p.schema)) {
        add(`header ${p.name} ${rule}`, [400, 404, 431], {
          headers: values.filter((value) => !/[^\x20-\x7e]/.test(value)).map((value) => ({ [p.name]: value })),
        });
      }
    }
    if (operation.body) this.#bodyViolations(operation, schemas, add);
    return { operation, valid: plan({}), invalid };
  }

  #validPathValue(operation: SpecOperation, name: string, schema: JsonSchema): fc.Arbitrary<unknown> {
    const pool = PATH_POOLS[`${operation.path}:${name}`];
    const values = urlSafe(this.#schemas.valid(schema));
    return pool ? fc.oneof({ weight: 3, arbitrary: pick(pool) }, { weight: 2, arbitrary: values }) : values;
  }

  #validParamValue(schema: JsonSchema, pool?: keyof Pools): fc.Arbitrary<unknown> {
    const values = urlSafe(this.#schemas.valid(schema));
    return pool ? fc.oneof(pick(pool), values) : values;
  }

  #stringParamViolations(schema: JsonSchema): [string, fc.Arbitrary<string>][] {
    const out: [string, fc.Arbitrary<string>][] = [];
    if (typeof schema.minLength === "number" && schema.minLength > 0) out.push(["minLength", fc.constant("x".repeat(schema.minLength - 1))]);
    if (typeof schema.maxLength === "number") {
      const max = schema.maxLength;
      out.push([
        "maxLength",
        fc.constantFrom("a".repeat(max + 1), "\u00e9".repeat(max + 1), "\ud83d\ude00".repeat(max + 1), "a".repeat(8 * 1024), "a".repeat(100 * 1024)),
      ]);
    }
    return out;
  }

  #validBody(operation: SpecOperation, schemas: SchemaArbitraries): fc.Arbitrary<BodyPlan> {
    const body = operation.body;
    if (!body) {
      // An operation without a body ignores whatever is sent.
      return fc.oneof(
        { weight: 6, arbitrary: fc.constant<BodyPlan>({ kind: "none" }) },
        {
          weight: 1,
          arbitrary: fc.constantFrom<BodyPlan>(
            { kind: "text", text: "", contentType: "application/json" },
            { kind: "text", text: "{not json", contentType: "application/json" },
            { kind: "text", text: "hello", contentType: "text/plain" },
          ),
        },
      );
    }
    if (body.mediaType === "multipart/form-data") return this.#validForm(body.schema, schemas).map((parts): BodyPlan => ({ kind: "form", parts }));
    const values = schemas.valid(body.schema).map((value): BodyPlan => ({ kind: "json", value, contentType: "application/json" }));
    const withTypes = fc.tuple(values, fc.constantFrom(...JSON_TYPES)).map(([plan, contentType]) => ({ ...plan, contentType }) as BodyPlan);
    if (body.required) return fc.oneof({ weight: 4, arbitrary: values }, { weight: 1, arbitrary: withTypes });
    // An optional body may be absent, empty, or empty with Content-Type: application/json.
    return fc.oneof(
      { weight: 4, arbitrary: values },
      { weight: 1, arbitrary: withTypes },
      {
        weight: 2,
        arbitrary: fc.constantFrom<BodyPlan>({ kind: "none" }, { kind: "text", text: "", contentType: "application/json" }, { kind: "text", text: "" }),
      },
    );
  }

  /** A valid form: every property a part (the `file` one a real archive), text parts as the schema allows. */
  #validForm(schema: JsonSchema, schemas: SchemaArbitraries): fc.Arbitrary<FormPart[]> {
    return schemas
      .valid(schema)
      .map((value) =>
        Object.entries(value as Record<string, unknown>).map(
          ([name, field]): FormPart => (name === "file" ? { name, value: "zip", filename: "extension.zip" } : { name, value: String(field) }),
        ),
      );
  }

  #bodyViolations(
    operation: SpecOperation,
    schemas: SchemaArbitraries,
    add: (label: string, expect: readonly number[], parts: { body: fc.Arbitrary<BodyPlan> }) => void,
  ): void {
    const body = operation.body as NonNullable<SpecOperation["body"]>;
    if (body.mediaType === "multipart/form-data") {
      this.#formViolations(body.schema, schemas, add);
      return;
    }
    for (const violation of schemas.violations(body.schema)) {
      add(`body ${violation.pointer || "/"} ${violation.rule}`, [400], {
        body: violation.values.map((value): BodyPlan => ({ kind: "json", value, contentType: "application/json" })),
      });
    }
    const valid = schemas.valid(body.schema);
    const text = (contentType: string | undefined) =>
      valid.map((value): BodyPlan => ({ kind: "text", text: toJson(value), ...(contentType === undefined ? {} : { contentType }) }));
    for (const contentType of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/xml",
      "application/jsonx",
      "application/json-patch+json",
      "text/json",
    ])
      add(`content-type ${contentType}`, [415], { body: text(contentType) });
    add("content-type missing", [400, 415], { body: text(undefined) });
    add("content-type unparsable", [400, 415], {
      body: fc.constantFrom("json", "application/", "/", ";", "application/json, text/plain").chain((type) => text(type)),
    });
    add("body malformed JSON", [400], {
      body: fc
        .constantFrom('{"a":', "{a:1}", "{'a':1}", '{"a":1,}', "NaN", '{"a":1}garbage', "[", "\u0000", '{"a":"\\ud800', '{"a":"\\x41"}')
        .map((json): BodyPlan => ({ kind: "text", text: json, contentType: "application/json" })),
    });
    add("body prototype keys", [400], {
      body: fc
        .constantFrom('{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}')
        .map((json): BodyPlan => ({ kind: "text", text: json, contentType: "application/json" })),
    });
    // 10,000 and 100,000 levels: a recursive parser, validator or serializer overflows its stack on these.
    add("body deeply nested", [400], {
      body: fc
        .constantFrom(10_000, 100_000)
        .map((depth): BodyPlan => ({ kind: "text", text: `${"[".repeat(depth)}${"]".repeat(depth)}`, contentType: "application/json" })),
    });
    // Just past the operation's own bound (x-max-bytes, else every JSON body's 1 MiB + 4 KiB), and twice it.
    const maxBytes = body.maxBytes ?? 1024 * 1024 + 4 * 1024;
    add("body too large", [413], {
      body: fc.constantFrom(2 * maxBytes, maxBytes + 1024).map((size): BodyPlan => ({ kind: "bytes", size, contentType: "application/json" })),
    });
    if (body.required) {
      add("body empty", [400], {
        body: fc.constantFrom<BodyPlan>(
          { kind: "text", text: "", contentType: "application/json" },
          { kind: "none" },
          { kind: "text", text: " \r\n", contentType: "application/json" },
        ),
      });
    }
    // Rules the spec states in prose, which the schema cannot carry.
    for (const extra of this.#proseRules[operation.operationId] ?? []) {
      add(`body ${extra.label}`, [400], { body: extra.values.map((value): BodyPlan => ({ kind: "json", value, contentType: "application/json" })) });
    }
  }

  #formViolations(
    schema: JsonSchema,
    schemas: SchemaArbitraries,
    add: (label: string, expect: readonly number[], parts: { body: fc.Arbitrary<BodyPlan> }) => void,
  ): void {
    const valid = this.#validForm(schema, schemas);
    const form = (parts: fc.Arbitrary<FormPart[]>, label: string, expect: readonly number[] = [400]) =>
      add(label, expect, { body: parts.map((list): BodyPlan => ({ kind: "form", parts: list })) });
    // The schema's violations that a form can carry: text parts only, so no wrong types.
    for (const violation of schemas.violations(schema)) {
      if (violation.rule === "type") continue;
      const parts = violation.values
        .filter((value) => typeof value === "object" && value !== null && Object.values(value).every((field) => typeof field === "string"))
        .map((value) =>
          Object.entries(value as Record<string, string>).map(
            ([name, field]): FormPart => (name === "file" ? { name, value: "zip", filename: "extension.zip" } : { name, value: field }),
          ),
        )
        // Part names go in a quoted header parameter; those that cannot be written there are not this case.
        .filter((parts) => parts.every((part) => /^[\x20-\x7e]+$/.test(part.name) && !/["\\]/.test(part.name)));
      form(parts, `form ${violation.pointer || "/"} ${violation.rule}`);
    }
    form(
      valid.map((parts) => parts.map((part) => (part.name === "file" ? { ...part, value: "junk" as const } : part))),
      "form file not a zip",
    );
    form(
      valid.map((parts) => parts.map((part) => (part.name === "file" ? { ...part, value: "empty" as const } : part))),
      "form file empty",
    );
    form(
      valid.map((parts) => parts.map((part) => (part.name === "file" ? { name: "file", value: "PK\u0003\u0004" } : part))),
      "form file without filename",
    );
    form(
      valid.map((parts) => [...parts, { name: "file", value: "zip" as const, filename: "second.zip" }]),
      "form two files",
    );
    form(
      valid.map((parts) => [...parts, { name: "other", value: "zip" as const, filename: "other.zip" }]),
      "form extra file",
    );
    form(
      valid.map((parts) => [...parts.filter((part) => part.name !== "name"), { name: "name", value: "first" }, { name: "name", value: "again" }]),
      "form name twice",
    );
    add("content-type application/json", [415], { body: fc.constant<BodyPlan>({ kind: "text", text: '{"name":"x"}', contentType: "application/json" }) });
    add("content-type text/plain", [415], { body: fc.constant<BodyPlan>({ kind: "text", text: "x", contentType: "text/plain" }) });
    add("content-type missing", [400, 415], { body: fc.constant<BodyPlan>({ kind: "text", text: "x" }) });
    add("form boundary missing or bad", [400], {
      body: fc
        .constantFrom(
          "multipart/form-data",
          "multipart/form-data; boundary=",
          'multipart/form-data; boundary=""',
          `multipart/form-data; boundary=${"b".repeat(71)}`,
          "multipart/form-data; boundary=a; boundary=b",
        )
        .map((contentType): BodyPlan => ({ kind: "text", text: "--x\r\n", contentType })),
    });
    add("form truncated", [400], {
      body: fc
        .constantFrom(
          '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.zip"\r\n\r\nPK',
          "--XX\r\nContent-Disposition: form-da",
          "hello world",
          "--XX--",
          "",
        )
        .map((text): BodyPlan => ({ kind: "text", text, contentType: "multipart/form-data; boundary=XX" })),
    });
    form(
      valid.map((parts) => parts.map((part) => (part.name === "file" ? { ...part, value: "oversized" as const } : part))),
      "form file too large",
      [413],
    );
  }
}

/** Values a URL can carry: a string with a lone surrogate has no UTF-8 form (the "not UTF-8" cases send those). */
function urlSafe(values: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return values.filter((value) => typeof value !== "string" || !/\p{Cs}/u.test(value));
}

/** Valid header values a client can send: printable ASCII without surrounding spaces (other bytes are the raw cases' business). */
function headerValues(schema: JsonSchema): fc.Arbitrary<string> {
  const max = typeof schema.maxLength === "number" ? schema.maxLength : 255;
  const edge = fc.stringMatching(/^[\x21-\x7e]$/);
  return fc.oneof(
    fc
      .tuple(edge, fc.string({ unit: fc.stringMatching(/^[\x20-\x7e]$/), maxLength: Math.min(max - 2, 60) }), edge)
      .map(([a, middle, b]) => `${a}${middle}${b}`),
    edge,
    fc.constant("p".repeat(max)),
  );
}

function integerParamViolations(schema: JsonSchema): [string, fc.Arbitrary<string>][] {
  const out: [string, fc.Arbitrary<string>][] = [["type", fc.constantFrom(...NOT_DECIMAL)]];
  if (typeof schema.minimum === "number") out.push(["minimum", fc.constantFrom(String(schema.minimum - 1), "-1", "-9223372036854775808")]);
  if (typeof schema.maximum === "number")
    out.push([
      "maximum",
      fc.constantFrom(String(schema.maximum + 1), "9223372036854775807", "9223372036854775808", "87739548417998464", `1${"0".repeat(400)}`),
    ]);
  return out;
}

/**
 * Percent-encodes a path segment or query value as UTF-8; a lone surrogate, which UTF-8
 * cannot encode, is sent as the bytes a lax encoder would write (WTF-8), so the server
 * sees what such clients send.
 */
export function percentEncode(value: string): string {
  let out = "";
  for (const char of value) {
    const code = char.codePointAt(0) as number;
    if (code >= 0xd800 && code <= 0xdfff)
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((byte) => `%${byte.toString(16).toUpperCase()}`).join("");
    else out += encodeURIComponent(char);
  }
  return out;
}

/** Replaces every {@link PoolPick} in `value` with what its pool holds now. */
export function resolvePicks(value: unknown, pools: Pools): unknown {
  if (value instanceof PoolPick) {
    const pool = pools[value.pool];
    return pool.length === 0 ? `no-${value.pool}` : pool[value.index % pool.length];
  }
  if (value instanceof RawJson || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => resolvePicks(item, pools));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value))
    Object.defineProperty(out, key, { value: resolvePicks(item, pools), enumerable: true, writable: true, configurable: true });
  return out;
}

/** The credentials a request can be sent with. */
export interface Credentials {
  orgKey: string;
  scopedKey: string;
}

const FORM_BOUNDARY = "----fuzzboundary7MA4YWxkTrZu0gW";

/** What file parts hold: a real extension archive, and the size limit of one. */
export interface FormFiles {
  zip: Buffer;
  maxArchiveBytes: number;
}

/** Turns a plan into bytes: pool values drawn, path and query encoded, the body serialized. */
export function buildRequest(operation: SpecOperation, plan: RequestPlan, pools: Pools, credentials: Credentials, files: FormFiles): HttpRequest {
  const pathParams = resolvePicks(plan.pathParams, pools) as Record<string, unknown>;
  const path = operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) => percentEncode(String(pathParams[name])));
  const query = plan.query.map(([name, value]) => `${percentEncode(name)}=${percentEncode(value)}`).join("&");
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(resolvePicks(plan.headers, pools) as Record<string, unknown>)) headers[name] = String(value);
  const auth = {
    org: `Bearer ${credentials.orgKey}`,
    scoped: `Bearer ${credentials.scopedKey}`,
    none: undefined,
    garbage: "Bearer bsk_not_a_key_of_this_server",
    "not-bearer": `Basic ${Buffer.from("user:pass").toString("base64")}`,
  }[plan.auth];
  if (auth !== undefined) headers.authorization = auth;
  let body: Buffer | undefined;
  const bodyPlan = plan.body;
  if (bodyPlan.kind === "json") {
    body = Buffer.from(toJson(resolvePicks(bodyPlan.value, pools)));
    headers["content-type"] = bodyPlan.contentType;
  } else if (bodyPlan.kind === "text") {
    body = Buffer.from(bodyPlan.text);
    if (bodyPlan.contentType !== undefined) headers["content-type"] = bodyPlan.contentType;
  } else if (bodyPlan.kind === "bytes") {
    body = Buffer.alloc(bodyPlan.size, 0x20);
    headers["content-type"] = bodyPlan.contentType;
  } else if (bodyPlan.kind === "form") {
    body = formBody(bodyPlan.parts, files);
    headers["content-type"] = bodyPlan.contentType ?? `multipart/form-data; boundary=${FORM_BOUNDARY}`;
  }
  return {
    operationId: operation.operationId,
    label: plan.label,
    ...(plan.expect ? { expect: plan.expect } : {}),
    method: operation.method,
    target: query === "" ? path : `${path}?${query}`,
    headers,
    ...(body === undefined ? {} : { body }),
  };
}

function formBody(parts: FormPart[], files: FormFiles): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const content =
      part.value === "zip"
        ? files.zip
        : part.value === "junk"
          ? Buffer.from("this is not a zip archive")
          : part.value === "empty"
            ? Buffer.alloc(0)
            : part.value === "oversized"
              ? Buffer.alloc(files.maxArchiveBytes + 1)
              : Buffer.from(part.value);
    const filename = part.filename === undefined ? "" : `; filename="${part.filename}"`;
    const type = part.filename === undefined ? "" : "\r\nContent-Type: application/zip";
    chunks.push(
      Buffer.from(`--${FORM_BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"${filename}${type}\r\n\r\n`),
      content,
      Buffer.from("\r\n"),
    );
  }
  chunks.push(Buffer.from(`--${FORM_BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}
