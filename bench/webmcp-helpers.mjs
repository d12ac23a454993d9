#!/usr/bin/env node
// WebMCP helpers benchmark: operations per second of
//   - selection (selectTool / findTools) over a 1,000-tool snapshot shaped like the
//     recorded ones: 125 tabs in 4 windows, 8 tools per page, a cross-origin frame in
//     every fifth tab, names shared across tabs;
//   - checking inputs against page schemas with the helpers' safe validator (compile and
//     validate, as invokeTool does per call, and validate alone), side by side with Ajv 8
//     (which generates code from the schema: what the helpers must not do with page data),
//     including a catastrophic pattern that only the linear-time matcher can take.
// Fails (exit 1) if a case gives a wrong answer. Runs in about 20 s.
//
//   node bench/webmcp-helpers.mjs      (needs `pnpm build` first)
import { AmbiguousToolError, compileInputSchema, findTools, selectTool } from "@browser-service/webmcp-helpers";
import { Ajv } from "ajv";

/** Each case is warmed up, then measured `rounds` times (the best counts). */
const warmUpMs = 100;
const roundMs = 200;
const rounds = 3;

function die(message) {
  console.error(`\nbench/webmcp-helpers FAILED: ${message}`);
  process.exit(1);
}

// --- a 1,000-tool snapshot --------------------------------------------------------------
const names = ["search", "add_to_cart", "checkout", "reviews", "wait_for_stock", "subscribe", "track_order", "contact"];
const tools = [];
for (let tab = 0; tab < 125; tab++) {
  const windowId = 1_000 + (tab % 4);
  const pageUrl = `http://127.0.0.1:4000/shop/${tab % 50}`; // two or three tabs per URL
  const framed = tab % 5 === 0;
  names.forEach((name, index) => {
    const inFrame = framed && index % 2 === 1;
    tools.push({
      tool_ref: `wmt_${tab}_${index}`,
      name: index === 7 ? `contact_${tab}` : name,
      description: `${name} on page ${tab}`,
      input_schema: { type: "object", properties: { q: { type: "string" } } },
      source: {
        window_id: windowId,
        tab_id: tab + 1,
        page_url: pageUrl,
        page_title: `Shop ${tab % 50}`,
        frame: inFrame ? { frame_id: 10_000 + tab, url: `http://localhost:4001/widget/${tab}` } : null,
      },
    });
  });
}
if (tools.length !== 1000) die(`the snapshot has ${tools.length} tools`);
const lastTab = tools[tools.length - 1].source;

const selections = [
  ["selectTool: unique name", () => selectTool(tools, { name: "contact_124" })],
  ["selectTool: name + windowId + tabId", () => selectTool(tools, { name: "search", windowId: lastTab.window_id, tabId: lastTab.tab_id })],
  ["selectTool: name + origin (a frame)", () => selectTool(tools, { name: "add_to_cart", origin: "http://localhost:4001", tabId: 121 })],
  ["selectTool: name + pageUrl * pattern + tabId", () => selectTool(tools, { name: "reviews", pageUrl: "http://127.0.0.1:*/shop/7", tabId: 58 })],
  ["findTools: title RegExp", () => findTools(tools, { title: /^Shop 1\d$/ })],
  [
    "selectTool: ambiguous, 3 candidates explained",
    () => {
      try {
        selectTool(tools, { name: "search", pageUrl: "http://127.0.0.1:4000/shop/7" });
      } catch (error) {
        if (error instanceof AmbiguousToolError) return error.candidates;
        throw error;
      }
      die("the ambiguous selection selected one tool");
    },
  ],
];
const expected = [1, 1, 1, 1, 240, 3];
selections.forEach(([name, run], index) => {
  const got = run();
  const count = Array.isArray(got) ? got.length : 1;
  if (count !== expected[index]) die(`${name} gave ${count} results, expected ${expected[index]}`);
});

// --- page schemas ------------------------------------------------------------------------
const formSchema = {
  type: "object",
  properties: { item: { type: "string" }, size: { type: "string", enum: ["S", "M", "L"] }, gift: { type: "boolean" } },
  required: ["item"],
};
const cartSchema = {
  type: "object",
  properties: { sku: { type: "string", pattern: "^[A-Z]{2}-\\d{3}$" }, qty: { type: "integer", minimum: 1, maximum: 10 } },
  required: ["sku"],
  additionalProperties: false,
};
const orderSchema = {
  type: "object",
  required: ["customer", "lines", "shipping"],
  properties: {
    customer: {
      type: "object",
      required: ["email", "name"],
      properties: { email: { type: "string", pattern: "^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$" }, name: { type: "string", minLength: 1, maxLength: 100 } },
    },
    lines: {
      type: "array",
      minItems: 1,
      maxItems: 50,
      items: {
        type: "object",
        required: ["sku", "qty"],
        additionalProperties: false,
        properties: { sku: { type: "string", pattern: "^[A-Z]{2}-\\d{3}$" }, qty: { type: "integer", minimum: 1 }, note: { type: ["string", "null"] } },
      },
    },
    shipping: {
      oneOf: [
        { type: "object", required: ["method"], properties: { method: { const: "pickup" }, store: { type: "string" } } },
        { type: "object", required: ["method", "address"], properties: { method: { const: "delivery" }, address: { type: "string", minLength: 5 } } },
      ],
    },
  },
};
const order = {
  customer: { email: "ada@example.org", name: "Ada" },
  lines: Array.from({ length: 20 }, (_, i) => ({ sku: `AB-${String(100 + i)}`, qty: 1 + (i % 3), note: i % 2 ? null : "gift" })),
  shipping: { method: "delivery", address: "1 Analytical Way" },
};
const catastrophicSchema = { type: "object", properties: { q: { type: "string", pattern: "^(a+)+$" } } };

const ajv = new Ajv({ strict: false, allErrors: true });
const validations = [
  ["declarative form, valid", formSchema, { item: "teapot", size: "L", gift: true }, true],
  ["add_to_cart with a pattern, valid", cartSchema, { sku: "AB-123", qty: 2 }, true],
  ["add_to_cart, 3 problems", cartSchema, { sku: "lamp", qty: 11, colour: "red" }, false],
  ["order: 20 lines, oneOf, patterns", orderSchema, order, true],
  ["^(a+)+$ against 1,000 a's and '!'", catastrophicSchema, { q: `${"a".repeat(1000)}!` }, false],
];
const ajvValidators = validations.map(([, schema]) => ajv.compile(schema));
validations.forEach(([name, schema, input, valid], index) => {
  if (compileInputSchema(schema).validate(input).valid !== valid) die(`the helpers' validator got "${name}" wrong`);
  // Ajv backtracks on the catastrophic pattern for longer than this run lasts: not run.
  if (index < 4 && ajvValidators[index](input) !== valid) die(`Ajv got "${name}" wrong`);
});

// --- measuring ---------------------------------------------------------------------------
/** Calls per second of `run()` over `ms`. */
function opsPerSecond(run, ms) {
  let calls = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < 20; i++) run();
    calls += 20;
    elapsed = performance.now() - start;
  }
  return (calls * 1000) / elapsed;
}

/** The best of `rounds` measurements of `run`, after a warm-up. */
function best(run) {
  opsPerSecond(run, warmUpMs);
  let top = 0;
  for (let round = 0; round < rounds; round++) top = Math.max(top, opsPerSecond(run, roundMs));
  return top;
}

const formatOps = (ops) => (ops >= 1e6 ? `${(ops / 1e6).toFixed(2)} M/s` : ops >= 1e3 ? `${(ops / 1e3).toFixed(1)} k/s` : `${ops.toFixed(0)} /s`);

function printTable(rows) {
  const widths = rows[0].map((_, col) => Math.max(...rows.map((row) => row[col].length)));
  const line = (row) => `| ${row.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]) : cell.padStart(widths[col]))).join(" | ")} |`;
  console.log(line(rows[0]));
  console.log(`|${widths.map((w, col) => (col === 0 ? ":" : "-").padEnd(w + 1, "-") + (col === 0 ? "-" : ":")).join("|")}|`);
  for (const row of rows.slice(1)) console.log(line(row));
}

console.log(`bench/webmcp-helpers: best of ${rounds} rounds of ${roundMs} ms per case, node ${process.version}\n`);
console.log("Selection over a 1,000-tool snapshot (125 tabs, 4 windows, 25 cross-origin frames):\n");
printTable([
  ["case", "ops/s", "µs per call"],
  ...selections.map(([name, run]) => {
    const ops = best(run);
    return [name, formatOps(ops), (1e6 / ops).toFixed(1)];
  }),
]);

console.log("\nInput validation against page schemas:\n");
const rows = validations.map(([name, schema, input], index) => {
  const compiled = compileInputSchema(schema);
  const steps = compiled.validate(input).steps;
  const ours = best(() => compiled.validate(input));
  const oursWithCompile = best(() => compileInputSchema(schema).validate(input));
  const ajvValidate = index < 4 ? formatOps(best(() => ajvValidators[index](input))) : "- (backtracks)";
  // A fresh copy each time, removed after, so that Ajv's cache does not skip the compile.
  const ajvCompileOnce = () => {
    const copy = structuredClone(schema);
    ajv.compile(copy)(input);
    ajv.removeSchema(copy);
  };
  const ajvWithCompile = index < 4 ? formatOps(best(ajvCompileOnce)) : "-";
  return [name, formatOps(oursWithCompile), formatOps(ours), String(steps), ajvWithCompile, ajvValidate];
});
printTable([["schema / input", "helpers: compile + validate", "helpers: validate", "steps", "Ajv: compile + validate", "Ajv: validate"], ...rows]);
console.log("\nbench/webmcp-helpers: ok");
