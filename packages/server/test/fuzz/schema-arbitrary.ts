import fc from "fast-check";

// Why a mapper of our own, on fast-check's combinators: no maintained package turns the
// spec's JSON Schema 2020-12 into fast-check arbitraries. json-schema-fast-check (0.0.6)
// is archived and built on fast-check 1; json-schema-faker 0.6.3, though maintained and
// 2020-12-aware, draws from its own random source (no fast-check seed), throws on
// UpdateProjectRequest (minProperties with additionalProperties false) for about a
// quarter of its seeds, and breaks `not` and `if`/`then` (58 of 200 telemetry configs it
// made were invalid). Neither makes values that break a rule, which is most of a fuzzer's
// work. The request schemas use few keywords, so this covers them exactly, and throws on
// any keyword it does not know: a spec that starts using one fails here, loudly, instead
// of being fuzzed less than it seems.

/** A JSON Schema object as the bundled spec writes it. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** A JSON number that a JavaScript number cannot hold exactly (`1e400`, `2^53 + 1`); {@link toJson} writes its text as it is. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** What the mapper needs besides the schema. */
export interface SchemaContext {
  /** The schema a `$ref` of the bundled spec points at. */
  resolve(ref: string): JsonSchema;
  /** Valid strings for each `format` the request schemas use. */
  formats: Readonly<Record<string, fc.Arbitrary<string>>>;
  /** Valid values by JSON pointer from the schema's root, used instead of the schema's own (known ids, real files). */
  overrides?: Readonly<Record<string, fc.Arbitrary<unknown>>>;
  /**
   * Pointers whose schema the mapper does not read (keywords it does not know, such as the
   * `allOf` of `not` and `if`/`then` rules): their valid values are `overrides`' and their
   * violations the caller's prose rules.
   */
  opaque?: ReadonlySet<string>;
}

/** Values of a schema that break one of its rules, at `pointer`, named by the rule (a JSON Schema keyword). */
export interface Violation {
  pointer: string;
  rule: string;
  /** Values of the whole schema (from its root) that break that rule. */
  values: fc.Arbitrary<unknown>;
}

// Keywords that only describe: they constrain nothing a request must meet.
const ANNOTATIONS = new Set([
  "title",
  "description",
  "examples",
  "example",
  "default",
  "deprecated",
  "readOnly",
  "writeOnly",
  "contentMediaType",
  "$comment",
  "x-max-bytes",
  // An archive's bounds: the fuzzer sends one good archive as the file part, never a generated one.
  "x-max-entries",
  "x-max-entry-name-bytes",
  "x-max-unpacked-bytes",
  "x-max-compression-ratio",
  // How old a value the server read from a browser may be: a rule of answers, not of requests.
  "x-max-age-ms",
]);
const SUPPORTED = new Set([
  "$ref",
  "type",
  "enum",
  "const",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "format",
  "not",
  "properties",
  "required",
  "additionalProperties",
  "minProperties",
  "maxProperties",
  "propertyNames",
  "items",
  "maxItems",
  "uniqueItems",
  "oneOf",
  "x-max-depth",
]);

/**
 * Characters that have broken or fooled servers: controls (NUL first), line and paragraph
 * separators, bidi overrides and isolates, zero-width and invisible characters, lone
 * surrogates, a combining mark alone and after a letter (NFD), astral characters, and
 * the characters that mean something in paths, queries and JSON.
 */
export const EDGE_CHARACTERS: readonly string[] = [
  "\u0000",
  "\u0001",
  "\u0009",
  "\u000a",
  "\u000d",
  "\u001f",
  "\u007f",
  "\u0085",
  "\u00a0",
  "\u00ad",
  "\u061c",
  "\u180e",
  "\u200b",
  "\u200d",
  "\u200e",
  "\u200f",
  "\u2028",
  "\u2029",
  "\u202a",
  "\u202e",
  "\u2060",
  "\u2066",
  "\u2069",
  "\ufeff",
  "\ufffd",
  "\ufff9",
  "\ud800",
  "\udbff",
  "\udc00",
  "\udfff",
  "\u0301",
  "e\u0301",
  "\u1100\u1161",
  "\ud83d\ude00",
  "\ud83d\udc69\u200d\ud83d\udcbb",
  "\ud801\udc37",
  "\u0130",
  "\u00df",
  "\ufb01",
  "\u4e2d",
  "\u0627",
  "\u05d0",
  " ",
  "\\",
  '"',
  "'",
  "/",
  "%",
  "%2F",
  "?",
  "#",
  "&",
  "=",
  "+",
  ";",
  ",",
  ":",
  "..",
  "*",
  "<",
  ">",
  "{",
  "}",
];

/** Strings over printable ASCII, other Unicode and {@link EDGE_CHARACTERS}. */
export function edgyString(constraints: { minLength?: number; maxLength?: number } = {}): fc.Arbitrary<string> {
  const unit = fc.oneof(
    { weight: 4, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }) },
    { weight: 2, arbitrary: fc.constantFrom(...EDGE_CHARACTERS) },
  );
  return fc.string({ unit, ...constraints });
}

/** The number of code points of a string, as JSON Schema's minLength and maxLength count (a lone surrogate is one). */
export function codePoints(value: string): number {
  return [...value].length;
}

/** JSON text of a value that may hold {@link RawJson} numbers. */
export function toJson(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (item instanceof RawJson) {
      raws.push(item.text);
      return `\u0000raw${raws.length - 1}\u0000`;
    }
    return item;
  });
  return text === undefined ? "" : text.replace(/"\\u0000raw(\d+)\\u0000"/g, (_match, index: string) => raws[Number(index)] as string);
}

const TYPES = ["string", "integer", "number", "boolean", "null", "array", "object"] as const;

/** One value of each JSON type, for "wrong type" violations. */
const ONE_OF_EACH: Readonly<Record<(typeof TYPES)[number], unknown[]>> = {
  string: ["", "1", "true", "null", "{}"],
  integer: [0, 1, -1],
  number: [1.5, -0.5, 1e-7],
  boolean: [true, false],
  null: [null],
  array: [[], ["a"], [1, 2]],
  object: [{}, { a: 1 }],
};

function wrongTypes(allowed: readonly string[]): unknown[] {
  const accepts = (type: (typeof TYPES)[number]) => allowed.includes(type) || (type === "integer" && allowed.includes("number"));
  return TYPES.filter((type) => !accepts(type)).flatMap((type) => ONE_OF_EACH[type]);
}

/** Builds valid values and violations of the schemas of one spec. */
export class SchemaArbitraries {
  readonly #context: SchemaContext;

  constructor(context: SchemaContext) {
    this.#context = context;
  }

  #deref(schema: JsonSchema, pointer: string): JsonSchema {
    let current = schema;
    for (let hops = 0; typeof current.$ref === "string"; hops++) {
      if (hops > 32) throw new Error(`schema-arbitrary: $ref cycle at ${pointer}`);
      const { $ref, ...siblings } = current;
      current = { ...this.#context.resolve($ref as string), ...siblings };
    }
    for (const keyword of Object.keys(current)) {
      // Other x- keywords are the spec's own annotations (x-error-codes, x-client); an x-max-* is a rule to know.
      if (!SUPPORTED.has(keyword) && !ANNOTATIONS.has(keyword) && !(keyword.startsWith("x-") && !keyword.startsWith("x-max-"))) {
        throw new Error(`schema-arbitrary: the keyword "${keyword}" at ${pointer || "/"} is not supported; extend test/fuzz/schema-arbitrary.ts`);
      }
    }
    return current;
  }

  /** Values that meet every rule of `schema`. */
  valid(schema: JsonSchema, pointer = ""): fc.Arbitrary<unknown> {
    const override = this.#context.overrides?.[pointer];
    if (override) return override;
    const s = this.#deref(schema, pointer);
    if (s.not !== undefined && isEmptySchema(s.not)) throw new Error(`schema-arbitrary: ${pointer} allows no value; leave it out of its object`);
    let values: fc.Arbitrary<unknown>;
    if (s.const !== undefined) values = fc.constant(s.const);
    else if (Array.isArray(s.enum)) values = fc.constantFrom(...(s.enum as unknown[]));
    else if (Array.isArray(s.oneOf)) values = fc.oneof(...(s.oneOf as JsonSchema[]).map((branch, i) => this.valid(branch, `${pointer}/oneOf/${i}`)));
    else {
      const type = nullable(s.type);
      if (type === undefined) throw new Error(`schema-arbitrary: ${pointer || "/"} needs one type (or one and "null"), has ${JSON.stringify(s.type)}`);
      values = this.#validOfType(type, s, pointer);
      if (Array.isArray(s.type)) values = fc.oneof(values, fc.constant(null));
    }
    return s.not === undefined ? values : values.filter((value) => !this.#breaksNot(s.not as JsonSchema, value, pointer));
  }

  // `not` with a pattern is the only `not` a value can meet (`not: {}` marks a property that may not be sent).
  #breaksNot(not: JsonSchema, value: unknown, pointer: string): boolean {
    if (typeof not.pattern !== "string" || Object.keys(not).length !== 1)
      throw new Error(`schema-arbitrary: only "not" with a pattern (or {}) is supported, at ${pointer}`);
    return typeof value === "string" && new RegExp(not.pattern, "u").test(value);
  }

  #validOfType(type: string, s: JsonSchema, pointer: string): fc.Arbitrary<unknown> {
    switch (type) {
      case "string":
        return this.#validString(s, pointer);
      case "integer": {
        const min = typeof s.minimum === "number" ? s.minimum : Number.MIN_SAFE_INTEGER;
        const max = typeof s.maximum === "number" ? s.maximum : Number.MAX_SAFE_INTEGER;
        // The bounds themselves, as often as anything between them.
        return fc.oneof(fc.constantFrom(min, max), fc.integer({ min, max }));
      }
      case "number":
        return fc.double({
          noNaN: true,
          noDefaultInfinity: true,
          ...(typeof s.minimum === "number" ? { min: s.minimum } : {}),
          ...(typeof s.maximum === "number" ? { max: s.maximum } : {}),
        });
      case "boolean":
        return fc.boolean();
      case "null":
        return fc.constant(null);
      case "array": {
        const items = s.items === undefined ? fc.jsonValue({ maxDepth: 2 }) : this.valid(s.items as JsonSchema, `${pointer}/items`);
        const maxLength = Math.min(5, typeof s.maxItems === "number" ? s.maxItems : 5);
        return s.uniqueItems === true ? fc.uniqueArray(items, { maxLength, selector: (item) => JSON.stringify(item) }) : fc.array(items, { maxLength });
      }
      case "object":
        return this.#validObject(s, pointer);
      default:
        throw new Error(`schema-arbitrary: unknown type ${type} at ${pointer}`);
    }
  }

  #validString(s: JsonSchema, pointer: string): fc.Arbitrary<string> {
    const minLength = typeof s.minLength === "number" ? s.minLength : 0;
    const maxLength = typeof s.maxLength === "number" ? s.maxLength : undefined;
    const fits = (value: string) => codePoints(value) >= minLength && (maxLength === undefined || codePoints(value) <= maxLength);
    if (typeof s.format === "string") {
      const format = this.#context.formats[s.format];
      if (!format) throw new Error(`schema-arbitrary: no strings given for format "${s.format}" (at ${pointer})`);
      return format;
    }
    if (typeof s.pattern === "string") {
      const pattern = new RegExp(s.pattern, "u");
      // fast-check's own strings matching the pattern are mostly ASCII; Unicode ones that match come beside them.
      return fc
        .oneof(
          fc.stringMatching(pattern),
          edgyString({ minLength: 1, maxLength: 12 }).filter((value) => pattern.test(value)),
        )
        .filter(fits);
    }
    const longest = maxLength === undefined ? 40 : Math.min(maxLength, 40);
    const edges = [edgyString({ minLength, maxLength: longest }).filter(fits)];
    // The longest string allowed, of one-unit and of two-unit (astral) characters.
    if (maxLength !== undefined && maxLength <= 100_000) edges.push(fc.constantFrom("m".repeat(maxLength), "\ud83d\ude00".repeat(maxLength)));
    return fc.oneof(...edges);
  }

  #properties(s: JsonSchema): [string, JsonSchema][] {
    return Object.entries((s.properties ?? {}) as Record<string, JsonSchema>);
  }

  #validObject(s: JsonSchema, pointer: string): fc.Arbitrary<Record<string, unknown>> {
    const required = new Set((s.required ?? []) as string[]);
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    // A property whose schema is `not: {}` may not be sent (a deprecated field): never part of a valid value.
    for (const [name, property] of this.#properties(s))
      if (!(property.not !== undefined && isEmptySchema(property.not))) model[name] = this.valid(property, `${pointer}/${name}`);
    const open = s.additionalProperties === true || (s.additionalProperties === undefined && s.properties === undefined);
    const maxKeys = Math.min(6, typeof s.maxProperties === "number" ? s.maxProperties : 6);
    const map = this.#mapOf(s, pointer);
    const values = map
      ? fc.dictionary(map.keys, map.values, { maxKeys })
      : open && Object.keys(model).length === 0
        ? fc.dictionary(edgyString({ maxLength: 10 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys })
        : fc.record(model, { requiredKeys: [...required] });
    const minProperties = typeof s.minProperties === "number" ? s.minProperties : 0;
    return minProperties > 0 ? values.filter((value) => Object.keys(value).length >= minProperties) : values;
  }

  /** Values that break exactly one rule of `schema`, one entry per rule (and per property, recursively). */
  violations(schema: JsonSchema, pointer = ""): Violation[] {
    if (this.#context.opaque?.has(pointer) === true) return [];
    const s = this.#deref(schema, pointer);
    const out: Violation[] = [];
    const add = (rule: string, ...values: fc.Arbitrary<unknown>[]) =>
      out.push({ pointer, rule, values: values.length === 1 ? (values[0] as fc.Arbitrary<unknown>) : fc.oneof(...values) });
    if (s.not !== undefined && isEmptySchema(s.not)) {
      add("not", fc.jsonValue({ maxDepth: 1 }));
      return out;
    }
    if (s.const !== undefined || Array.isArray(s.enum)) {
      const allowed = (s.const !== undefined ? [s.const] : (s.enum as unknown[])).map((value) => JSON.stringify(value));
      const others = fc.oneof(
        edgyString({ maxLength: 12 }),
        fc.constantFrom(
          ...allowed
            .map((text) => JSON.parse(text) as unknown)
            .filter((value) => typeof value === "string")
            .flatMap((value) => [(value as string).toUpperCase(), ` ${value as string}`, `${value as string}\u0000`]),
        ),
      );
      add(
        "enum",
        others.filter((value) => !allowed.includes(JSON.stringify(value))),
      );
    }
    if (Array.isArray(s.oneOf)) {
      const branches = s.oneOf as JsonSchema[];
      // Two branches' properties at once: an object that is more than one of them.
      if (branches.length > 1)
        add(
          "oneOf",
          fc
            .tuple(this.valid(branches[0] as JsonSchema, pointer), this.valid(branches[1] as JsonSchema, pointer))
            .map(([a, b]) => ({ ...(a as object), ...(b as object) })),
        );
    }
    const type = nullable(s.type);
    if (type !== undefined) {
      add("type", fc.constantFrom(...wrongTypes(Array.isArray(s.type) ? [type, "null"] : [type])));
      if (type === "string") out.push(...this.#stringViolations(s, pointer));
      if (type === "integer" || type === "number") out.push(...numberViolations(s, pointer, type));
      if (type === "object") out.push(...this.#objectViolations(s, pointer));
      if (type === "array" && s.items !== undefined) {
        for (const inner of this.violations(s.items as JsonSchema, `${pointer}/items`)) out.push({ ...inner, values: inner.values.map((value) => [value]) });
        if (typeof s.maxItems === "number") {
          const maxItems = s.maxItems;
          add("maxItems", fc.array(this.valid(s.items as JsonSchema, `${pointer}/items`), { minLength: maxItems + 1, maxLength: maxItems + 3 }));
        }
        if (s.uniqueItems === true)
          add(
            "uniqueItems",
            this.valid(s.items as JsonSchema, `${pointer}/items`).map((value) => [value, value]),
          );
      }
    }
    if (s.not !== undefined && typeof (s.not as JsonSchema).pattern === "string") {
      add("not", fc.stringMatching(new RegExp((s.not as JsonSchema).pattern as string, "u")));
    }
    if (typeof s["x-max-depth"] === "number") {
      // One level too deep, and far deeper (a recursive parser, validator or serializer overflows its stack there); as text, since building it would too.
      const max = s["x-max-depth"];
      add(
        "maxDepth",
        fc.constantFrom(max + 1, 5_000, 100_000).map((depth) => new RawJson(`${'{"a":'.repeat(depth - 1)}{}${"}".repeat(depth - 1)}`)),
      );
    }
    return out;
  }

  #stringViolations(s: JsonSchema, pointer: string): Violation[] {
    const out: Violation[] = [];
    const minLength = typeof s.minLength === "number" ? s.minLength : 0;
    const maxLength = typeof s.maxLength === "number" ? s.maxLength : undefined;
    if (minLength > 0) out.push({ pointer, rule: "minLength", values: fc.constant("x".repeat(minLength - 1)) });
    if (maxLength !== undefined) {
      // One past the limit, in one-unit and astral characters (a limit counted in UTF-16 units would pass the first only), and far past it.
      out.push({
        pointer,
        rule: "maxLength",
        values: fc.constantFrom(
          "m".repeat(maxLength + 1),
          "\ud83d\ude00".repeat(maxLength + 1),
          "\u00e9".repeat(maxLength + 1),
          "m".repeat(Math.max(maxLength * 40, 100_000)),
        ),
      });
    }
    if (typeof s.pattern === "string") {
      const pattern = new RegExp(s.pattern, "u");
      const breaking = fc.oneof(
        edgyString({ minLength: 1, maxLength: 12 }),
        // A valid value with one edge character put in front, in the middle or at the end.
        fc.tuple(this.#validString({ ...s, pattern: s.pattern }, pointer), fc.constantFrom(...EDGE_CHARACTERS), fc.nat()).map(([value, edge, at]) => {
          const chars = [...value];
          const index = at % (chars.length + 1);
          return [...chars.slice(0, index), edge, ...chars.slice(index)].join("");
        }),
      );
      out.push({
        pointer,
        rule: "pattern",
        values: breaking.filter(
          (value) => !pattern.test(value) && codePoints(value) >= minLength && (maxLength === undefined || codePoints(value) <= maxLength),
        ),
      });
    }
    if (s.format === "uri") {
      // Never a host other than this machine's: a server that wrongly took one would make Chromium go there.
      out.push({
        pointer,
        rule: "format",
        values: fc.constantFrom(
          "not a uri",
          "http://127.0.0.1:1/a b",
          "http://[::1",
          "http://127.0.0.1/%ZZ",
          "//127.0.0.1/",
          "\u0000http://127.0.0.1/",
          "http://127.0.0.1/\u00e9",
        ),
      });
      out.push({
        pointer,
        rule: "pattern",
        values: fc.constantFrom(
          "ftp://127.0.0.1/",
          "file:///etc/passwd",
          "javascript:alert(1)",
          "data:text/html,hi",
          "chrome://settings",
          "about:blank",
          "HTTP://127.0.0.1/",
          " http://127.0.0.1/",
        ),
      });
    }
    return out;
  }

  /** Keys and values of a map: an object whose entries are all alike (`additionalProperties` a schema, `propertyNames` its keys). */
  #mapOf(s: JsonSchema, pointer: string): { keys: fc.Arbitrary<string>; values: fc.Arbitrary<unknown> } | undefined {
    if (typeof s.additionalProperties !== "object" || s.additionalProperties === null || s.properties !== undefined) return undefined;
    // Property names are strings whether the schema says so or not.
    const names = s.propertyNames === undefined ? undefined : ({ type: "string", ...(s.propertyNames as JsonSchema) } as JsonSchema);
    const keys = names === undefined ? edgyString({ minLength: 1, maxLength: 10 }) : (this.valid(names, `${pointer}/propertyNames`) as fc.Arbitrary<string>);
    return { keys, values: this.valid(s.additionalProperties as JsonSchema, `${pointer}/additionalProperties`) };
  }

  #objectViolations(s: JsonSchema, pointer: string): Violation[] {
    const out: Violation[] = [];
    const base = this.#validObject(s, pointer);
    const map = this.#mapOf(s, pointer);
    if (map) {
      if (typeof s.maxProperties === "number") {
        const max = s.maxProperties;
        out.push({ pointer, rule: "maxProperties", values: fc.constant(Object.fromEntries(Array.from({ length: max + 1 }, (_, i) => [`k${i}`, "v"]))) });
        // Keys of the map's own pattern, to be sure each is one the server takes.
        if (s.propertyNames !== undefined)
          out.push({
            pointer,
            rule: "maxProperties",
            values: fc
              .uniqueArray(map.keys, { minLength: max + 1, maxLength: max + 1 })
              .chain((keys) => fc.tuple(...keys.map(() => map.values)).map((items) => Object.fromEntries(keys.map((key, i) => [key, items[i]])))),
          });
      }
      if (s.propertyNames !== undefined) {
        for (const inner of this.violations({ type: "string", ...(s.propertyNames as JsonSchema) }, `${pointer}/propertyNames`)) {
          if (inner.rule === "type") continue;
          out.push({ ...inner, values: fc.tuple(inner.values, map.values).map(([key, value]) => defineKey({}, String(key), value)) });
        }
      }
      for (const inner of this.violations(s.additionalProperties as JsonSchema, `${pointer}/additionalProperties`)) {
        out.push({ ...inner, values: fc.tuple(map.keys, inner.values).map(([key, value]) => defineKey({}, key, value)) });
      }
      return out;
    }
    const properties = this.#properties(s);
    for (const name of (s.required ?? []) as string[]) {
      out.push({ pointer: `${pointer}/${name}`, rule: "required", values: base.map((value) => withoutKey(value, name)) });
    }
    if (s.additionalProperties === false) {
      const names = new Set(properties.map(([name]) => name));
      const extra = fc
        .oneof(edgyString({ minLength: 1, maxLength: 10 }), fc.constantFrom("__proto__", "constructor", "prototype", "toString", "", "NAME", "name ", "id"))
        .filter((name) => !names.has(name));
      out.push({
        pointer,
        rule: "additionalProperties",
        values: fc.tuple(base, extra, fc.jsonValue({ maxDepth: 2 })).map(([value, key, extraValue]) => defineKey({ ...value }, key, extraValue)),
      });
    }
    if (typeof s.minProperties === "number" && s.minProperties > 0) out.push({ pointer, rule: "minProperties", values: fc.constant({}) });
    for (const [name, property] of properties) {
      for (const inner of this.violations(property, `${pointer}/${name}`)) {
        out.push({ ...inner, values: fc.tuple(base, inner.values).map(([value, bad]) => defineKey({ ...value }, name, bad)) });
      }
    }
    return out;
  }
}

function numberViolations(s: JsonSchema, pointer: string, type: string): Violation[] {
  const out: Violation[] = [];
  if (type === "integer")
    out.push({ pointer, rule: "type", values: fc.constantFrom(1.5, 0.1, -2.5, new RawJson("1e400"), new RawJson("-1e400"), new RawJson("1.5e0")) });
  if (typeof s.minimum === "number") {
    const min = s.minimum;
    out.push({
      pointer,
      rule: "minimum",
      values: fc.oneof(fc.constantFrom(min - 1, -1e20, Number.MIN_SAFE_INTEGER), fc.integer({ min: Number.MIN_SAFE_INTEGER, max: min - 1 })),
    });
  }
  if (typeof s.maximum === "number") {
    const max = s.maximum;
    // Past the bound, past 2^53 (the 87739548417998464 was stored rounded), past 2^63 and past any double.
    const huge = [
      max + 1,
      1e20,
      1e29,
      87739548417998464,
      2 ** 63,
      new RawJson("9007199254740993"),
      new RawJson("9223372036854775808"),
      new RawJson(`1${"0".repeat(400)}`),
    ];
    out.push({ pointer, rule: "maximum", values: fc.oneof(fc.constantFrom(...huge), fc.integer({ min: max + 1, max: Number.MAX_SAFE_INTEGER })) });
  }
  return out;
}

/** The type of `type` when it is one type, or one type and `"null"`; `undefined` otherwise. */
function nullable(type: unknown): string | undefined {
  if (typeof type === "string") return type;
  if (Array.isArray(type) && type.length === 2 && type.includes("null")) return type.find((each) => each !== "null") as string;
  return undefined;
}

function isEmptySchema(schema: unknown): boolean {
  return typeof schema === "object" && schema !== null && Object.keys(schema).length === 0;
}

function withoutKey(value: Record<string, unknown>, key: string): Record<string, unknown> {
  const copy = { ...value };
  delete copy[key];
  return copy;
}

// An own property even for "__proto__", which plain assignment would turn into a prototype change.
function defineKey(target: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}
