import type { SchemaCase } from "./types.js";
import { schemaRef } from "./types.js";

const mabc = schemaRef("ManagedAuthBrowserConfig");
const proxy = schemaRef("BrowserProxyConfig");
const region = schemaRef("Region");
const telemetry = schemaRef("BrowserTelemetryRequestConfig");
const categories = schemaRef("BrowserTelemetryCategoriesConfig");
const category = schemaRef("BrowserTelemetryCategoryConfig");
const control = schemaRef("BrowserTelemetryControlCategoryConfig");
const cdp = schemaRef("BrowserTelemetryCdpConfig");
const cdpMethod = schemaRef("TelemetryCdpMethod");
const exportConfig = schemaRef("BrowserTelemetryExportRequestConfig");
const otlp = schemaRef("BrowserTelemetryOTLPExportRequestConfig");
const destination = schemaRef("OTLPDestinationRef");
const storage = schemaRef("BrowserTelemetryStorageRequestConfig");
const resolvedConfig = schemaRef("BrowserTelemetryConfig");
const resolvedCategories = schemaRef("BrowserTelemetryResolvedCategories");
const telemetryCategory = schemaRef("TelemetryCategory");
const telemetryEvent = schemaRef("TelemetryEvent");
const eventSource = schemaRef("TelemetryEventSource");
const envelope = schemaRef("TelemetryEventEnvelope");

/** Every category of a browser's resolved telemetry, the default set on. */
const allCategories = {
  control: { enabled: true, cdp: { excluded_methods: [] } },
  connection: { enabled: true },
  system: { enabled: true },
  captcha: { enabled: true },
  console: { enabled: false },
  network: { enabled: false },
  page: { enabled: false },
  interaction: { enabled: false },
  screenshot: { enabled: false },
  platform: { enabled: false },
};
const consoleEvent = {
  category: "console",
  type: "console_log",
  ts: 1796438400000000,
  source: { kind: "cdp", event: "Runtime.consoleAPICalled" },
  data: { level: "log", text: "<b>page text</b>" },
};

/** Every CDP method the contract lets `control.cdp.excluded_methods` name. */
const cdpMethods = [
  "Input.dispatchMouseEvent",
  "Input.dispatchKeyEvent",
  "Input.insertText",
  "Input.imeSetComposition",
  "Input.dispatchTouchEvent",
  "Input.dispatchDragEvent",
  "Input.cancelDragging",
  "Input.emulateTouchFromMouseEvent",
  "Input.synthesizePinchGesture",
  "Input.synthesizeScrollGesture",
  "Input.synthesizeTapGesture",
  "DOM.setFileInputFiles",
  "DOM.focus",
  "DOM.scrollIntoViewIfNeeded",
  "Page.bringToFront",
  "Page.captureScreenshot",
  "Page.captureSnapshot",
  "Page.handleJavaScriptDialog",
  "Page.navigate",
  "Page.navigateToHistoryEntry",
  "Page.reload",
  "Page.printToPDF",
  "Page.startScreencast",
  "Page.stopScreencast",
  "Page.stopLoading",
  "Page.close",
  "Page.setWebLifecycleState",
  "Target.activateTarget",
  "Target.closeTarget",
  "Target.createTarget",
  "Target.createBrowserContext",
  "Target.disposeBrowserContext",
  "Target.openDevTools",
  "Browser.cancelDownload",
  "Browser.close",
  "Browser.setWindowBounds",
  "Browser.setContentsSize",
  "Autofill.trigger",
] as const;

const categoryNames = ["control", "connection", "system", "captcha", "console", "network", "page", "interaction", "screenshot", "platform"] as const;

const regions = ["us-east", "eu-west", "ap-southeast"] as const;

const withDestination = { otlp: { destination: { name: "honeycomb-prod" } } };

/** Rule table of the managed auth browser configuration, proxy, region and telemetry request schemas. */
export const browserConfigCases: readonly SchemaCase[] = [
  // ManagedAuthBrowserConfig
  { schema: mabc, rule: "all fields optional: empty object", value: {}, valid: true },
  {
    schema: mabc,
    rule: "full configuration",
    value: {
      proxy: { name: "residential-us" },
      region: "eu-west",
      stealth: false,
      telemetry: { enabled: true, browser: { console: { enabled: true } } },
    },
    valid: true,
  },
  { schema: mabc, rule: "telemetry nullable: null", value: { telemetry: null }, valid: true },
  { schema: mabc, rule: "stealth boolean", value: { stealth: true }, valid: true },
  { schema: mabc, rule: "stealth boolean: string", value: { stealth: "yes" }, valid: false },
  { schema: mabc, rule: "region enum: unknown region", value: { region: "us-west" }, valid: false },
  { schema: mabc, rule: "proxy exactly one of: empty object", value: { proxy: {} }, valid: false },
  { schema: mabc, rule: "proxy by mode", value: { proxy: { mode: "direct" } }, valid: true },
  { schema: mabc, rule: "telemetry type: string", value: { telemetry: "on" }, valid: false },
  {
    schema: mabc,
    rule: "telemetry rules apply: enabled false with browser",
    value: { telemetry: { enabled: false, browser: { console: { enabled: true } } } },
    valid: false,
  },
  {
    schema: mabc,
    rule: "service-controlled fields not settable: headless",
    value: { headless: true },
    valid: false,
  },
  { schema: mabc, rule: "deprecated proxy_id not allowed here", value: { proxy_id: "prx_1" }, valid: false },
  { schema: mabc, rule: "type: array", value: [], valid: false },

  // BrowserProxyConfig
  { schema: proxy, rule: "exactly one of: mode direct", value: { mode: "direct" }, valid: true },
  { schema: proxy, rule: "exactly one of: mode default", value: { mode: "default" }, valid: true },
  { schema: proxy, rule: "exactly one of: id", value: { id: "prx_8f2c1a" }, valid: true },
  { schema: proxy, rule: "exactly one of: name", value: { name: "residential-us" }, valid: true },
  { schema: proxy, rule: "exactly one of: empty object", value: {}, valid: false },
  { schema: proxy, rule: "exactly one of: two keys (id, name)", value: { id: "prx_1", name: "x" }, valid: false },
  { schema: proxy, rule: "exactly one of: two keys (mode, id)", value: { mode: "direct", id: "prx_1" }, valid: false },
  {
    schema: proxy,
    rule: "exactly one of: three keys",
    value: { mode: "default", id: "prx_1", name: "x" },
    valid: false,
  },
  { schema: proxy, rule: "mode enum: unknown mode", value: { mode: "stealth" }, valid: false },
  { schema: proxy, rule: "id minLength 1: empty id", value: { id: "" }, valid: false },
  { schema: proxy, rule: "name minLength 1: empty name", value: { name: "" }, valid: false },
  { schema: proxy, rule: "id type: number", value: { id: 42 }, valid: false },
  { schema: proxy, rule: "no other properties", value: { mode: "direct", region: "us-east" }, valid: false },
  { schema: proxy, rule: "no other properties: unknown key alone", value: { url: "http://proxy" }, valid: false },
  { schema: proxy, rule: "type: string", value: "direct", valid: false },
  { schema: proxy, rule: "type: null", value: null, valid: false },

  // Region
  ...regions.map((r): SchemaCase => ({ schema: region, rule: `enum: ${r}`, value: r, valid: true })),
  { schema: region, rule: "enum: unknown region", value: "us-west", valid: false },
  { schema: region, rule: "enum: case-sensitive", value: "US-EAST", valid: false },
  { schema: region, rule: "enum: empty string", value: "", valid: false },
  { schema: region, rule: "type: number", value: 1, valid: false },

  // BrowserTelemetryRequestConfig
  { schema: telemetry, rule: "all fields optional: empty object", value: {}, valid: true },
  { schema: telemetry, rule: "enabled true alone", value: { enabled: true }, valid: true },
  { schema: telemetry, rule: "enabled false alone", value: { enabled: false }, valid: true },
  {
    schema: telemetry,
    rule: "enabled false + browser: rejected",
    value: { enabled: false, browser: { console: { enabled: true } } },
    valid: false,
  },
  {
    schema: telemetry,
    rule: "enabled false + browser: rejected even when empty",
    value: { enabled: false, browser: {} },
    valid: false,
  },
  {
    schema: telemetry,
    rule: "enabled false + browser: enabled true accepted",
    value: { enabled: true, browser: { console: { enabled: true } } },
    valid: true,
  },
  {
    schema: telemetry,
    rule: "enabled false + browser: enabled omitted accepted (merge)",
    value: { browser: { network: { enabled: true }, captcha: { enabled: false } } },
    valid: true,
  },
  {
    schema: telemetry,
    rule: "enabled false + export: rejected",
    value: { enabled: false, export: withDestination },
    valid: false,
  },
  {
    schema: telemetry,
    rule: "enabled false + export: enabled true accepted",
    value: { enabled: true, export: withDestination },
    valid: true,
  },
  {
    schema: telemetry,
    rule: "enabled false + export: enabled omitted accepted",
    value: { export: withDestination },
    valid: true,
  },
  {
    schema: telemetry,
    rule: "storage false needs destination: no export rejected",
    value: { enabled: true, storage: { enabled: false } },
    valid: false,
  },
  {
    schema: telemetry,
    rule: "storage false needs destination: export without destination rejected",
    value: { enabled: true, storage: { enabled: false }, export: { otlp: { enabled: false } } },
    valid: false,
  },
  {
    schema: telemetry,
    rule: "storage false needs destination: with destination accepted",
    value: { enabled: true, storage: { enabled: false }, export: withDestination },
    valid: true,
  },
  {
    schema: telemetry,
    rule: "storage false needs destination: not satisfiable with enabled false",
    value: { enabled: false, storage: { enabled: false }, export: withDestination },
    valid: false,
  },
  {
    schema: telemetry,
    rule: "storage true without destination accepted",
    value: { storage: { enabled: true } },
    valid: true,
  },
  {
    schema: telemetry,
    rule: "storage enabled omitted (default true) without destination accepted",
    value: { storage: {} },
    valid: true,
  },
  {
    schema: telemetry,
    rule: "full configuration",
    value: {
      enabled: true,
      browser: {
        control: { enabled: true, cdp: { excluded_methods: ["Input.dispatchMouseEvent"] } },
        screenshot: { enabled: true },
      },
      export: { otlp: { destination: { id: "otlpdst_3k9x" }, enabled: true } },
      storage: { enabled: false },
    },
    valid: true,
  },
  { schema: telemetry, rule: "enabled type: string", value: { enabled: "true" }, valid: false },
  { schema: telemetry, rule: "browser type: array", value: { browser: [] }, valid: false },
  { schema: telemetry, rule: "export needs otlp", value: { export: {} }, valid: false },
  { schema: telemetry, rule: "no other properties", value: { enabled: true, categories: {} }, valid: false },
  { schema: telemetry, rule: "type: null", value: null, valid: false },

  // BrowserTelemetryCategoriesConfig
  { schema: categories, rule: "empty object: default set", value: {}, valid: true },
  ...categoryNames.map(
    (name): SchemaCase => ({
      schema: categories,
      rule: `category name: ${name}`,
      value: { [name]: { enabled: true } },
      valid: true,
    }),
  ),
  {
    schema: categories,
    rule: "category name: all ten at once",
    value: Object.fromEntries(categoryNames.map((name) => [name, { enabled: false }])),
    valid: true,
  },
  { schema: categories, rule: "category name: unknown category", value: { dom: { enabled: true } }, valid: false },
  {
    schema: categories,
    rule: "category name: case-sensitive",
    value: { Console: { enabled: true } },
    valid: false,
  },
  { schema: categories, rule: "category value: boolean shorthand", value: { console: true }, valid: false },
  {
    schema: categories,
    rule: "control carries cdp",
    value: { control: { cdp: { excluded_methods: ["Page.navigate"] } } },
    valid: true,
  },
  {
    schema: categories,
    rule: "only control carries cdp",
    value: { console: { enabled: true, cdp: { excluded_methods: [] } } },
    valid: false,
  },

  // BrowserTelemetryCategoryConfig
  { schema: category, rule: "enabled true", value: { enabled: true }, valid: true },
  { schema: category, rule: "enabled false", value: { enabled: false }, valid: true },
  { schema: category, rule: "enabled optional", value: {}, valid: true },
  { schema: category, rule: "enabled type: string", value: { enabled: "on" }, valid: false },
  { schema: category, rule: "no other properties", value: { enabled: true, level: "debug" }, valid: false },
  { schema: category, rule: "type: boolean", value: true, valid: false },

  // BrowserTelemetryControlCategoryConfig
  { schema: control, rule: "enabled false (opt-out)", value: { enabled: false }, valid: true },
  {
    schema: control,
    rule: "cdp merges independently of enabled",
    value: { enabled: false, cdp: { excluded_methods: ["Input.dispatchKeyEvent"] } },
    valid: true,
  },
  { schema: control, rule: "cdp alone", value: { cdp: { excluded_methods: [] } }, valid: true },
  { schema: control, rule: "enabled type: number", value: { enabled: 1 }, valid: false },
  { schema: control, rule: "cdp type: array", value: { cdp: ["Page.navigate"] }, valid: false },
  { schema: control, rule: "no other properties", value: { enabled: true, excluded_methods: [] }, valid: false },

  // BrowserTelemetryCdpConfig
  { schema: cdp, rule: "excluded_methods optional (keep current list)", value: {}, valid: true },
  { schema: cdp, rule: "excluded_methods empty array (report all again)", value: { excluded_methods: [] }, valid: true },
  {
    schema: cdp,
    rule: "excluded_methods: every supported method at once",
    value: { excluded_methods: [...cdpMethods] },
    valid: true,
  },
  {
    schema: cdp,
    rule: "excluded_methods: unknown method",
    value: { excluded_methods: ["Runtime.evaluate"] },
    valid: false,
  },
  {
    schema: cdp,
    rule: "excluded_methods uniqueItems: duplicate method",
    value: { excluded_methods: ["Page.navigate", "Page.navigate"] },
    valid: false,
  },
  { schema: cdp, rule: "excluded_methods type: string", value: { excluded_methods: "Page.navigate" }, valid: false },
  { schema: cdp, rule: "excluded_methods type: null", value: { excluded_methods: null }, valid: false },
  { schema: cdp, rule: "no other properties", value: { included_methods: [] }, valid: false },

  // TelemetryCdpMethod
  ...cdpMethods.map((m): SchemaCase => ({ schema: cdpMethod, rule: `enum: ${m}`, value: m, valid: true })),
  { schema: cdpMethod, rule: "enum: unknown method", value: "Runtime.evaluate", valid: false },
  { schema: cdpMethod, rule: "enum: case-sensitive", value: "page.navigate", valid: false },
  { schema: cdpMethod, rule: "enum: domain only", value: "Input", valid: false },
  { schema: cdpMethod, rule: "type: array", value: ["Page.navigate"], valid: false },

  // BrowserTelemetryExportRequestConfig
  { schema: exportConfig, rule: "otlp with destination", value: withDestination, valid: true },
  { schema: exportConfig, rule: "otlp disabled", value: { otlp: { enabled: false } }, valid: true },
  { schema: exportConfig, rule: "otlp required", value: {}, valid: false },
  { schema: exportConfig, rule: "otlp type: string", value: { otlp: "honeycomb-prod" }, valid: false },
  {
    schema: exportConfig,
    rule: "no other properties",
    value: { ...withDestination, s3: { bucket: "b" } },
    valid: false,
  },

  // BrowserTelemetryOTLPExportRequestConfig
  { schema: otlp, rule: "destination by id", value: { destination: { id: "otlpdst_3k9x" } }, valid: true },
  { schema: otlp, rule: "destination by name", value: { destination: { name: "honeycomb-prod" } }, valid: true },
  {
    schema: otlp,
    rule: "enabled true + destination",
    value: { enabled: true, destination: { id: "otlpdst_3k9x" } },
    valid: true,
  },
  {
    schema: otlp,
    rule: "enabled false + destination: rejected",
    value: { enabled: false, destination: { id: "otlpdst_3k9x" } },
    valid: false,
  },
  { schema: otlp, rule: "enabled false without destination", value: { enabled: false }, valid: true },
  { schema: otlp, rule: "enabled true requires destination", value: { enabled: true }, valid: false },
  { schema: otlp, rule: "empty object: no export", value: {}, valid: true },
  { schema: otlp, rule: "destination exactly one of: empty object", value: { destination: {} }, valid: false },
  { schema: otlp, rule: "destination type: string", value: { destination: "honeycomb-prod" }, valid: false },
  { schema: otlp, rule: "enabled type: string", value: { enabled: "false" }, valid: false },
  {
    schema: otlp,
    rule: "no other properties",
    value: { destination: { id: "otlpdst_3k9x" }, endpoint: "https://otlp.example" },
    valid: false,
  },

  // OTLPDestinationRef
  { schema: destination, rule: "exactly one of: id", value: { id: "otlpdst_3k9x" }, valid: true },
  { schema: destination, rule: "exactly one of: name", value: { name: "honeycomb-prod" }, valid: true },
  { schema: destination, rule: "exactly one of: empty object", value: {}, valid: false },
  {
    schema: destination,
    rule: "exactly one of: two keys (id, name)",
    value: { id: "otlpdst_3k9x", name: "honeycomb-prod" },
    valid: false,
  },
  { schema: destination, rule: "id minLength 1: empty id", value: { id: "" }, valid: false },
  { schema: destination, rule: "name minLength 1: empty name", value: { name: "" }, valid: false },
  { schema: destination, rule: "name type: number", value: { name: 7 }, valid: false },
  { schema: destination, rule: "no other properties", value: { id: "otlpdst_3k9x", project: "p" }, valid: false },
  { schema: destination, rule: "type: string", value: "otlpdst_3k9x", valid: false },

  // BrowserTelemetryStorageRequestConfig
  { schema: storage, rule: "enabled true", value: { enabled: true }, valid: true },
  { schema: storage, rule: "enabled false (destination checked by the parent)", value: { enabled: false }, valid: true },
  { schema: storage, rule: "enabled optional (default true)", value: {}, valid: true },
  { schema: storage, rule: "enabled type: string", value: { enabled: "false" }, valid: false },
  { schema: storage, rule: "no other properties", value: { enabled: true, retention_days: 7 }, valid: false },
  { schema: storage, rule: "type: boolean", value: false, valid: false },

  { schema: cdp, rule: "maxItems 38: one name past every method", value: { excluded_methods: [...cdpMethods, "Input.dispatchMouseEvent"] }, valid: false },
  // BrowserTelemetryConfig (a browser's resolved telemetry, on its record)
  {
    schema: resolvedConfig,
    rule: "every category, storage and no export",
    value: { browser: allCategories, storage: { enabled: true }, export: null },
    valid: true,
  },
  {
    schema: resolvedConfig,
    rule: "an export names its destination by id and name",
    value: { browser: allCategories, storage: { enabled: false }, export: { otlp: { destination: { id: "otlpdst_a", name: "a" } } } },
    valid: true,
  },
  { schema: resolvedConfig, rule: "export is required (null for none)", value: { browser: allCategories, storage: { enabled: true } }, valid: false },
  {
    schema: resolvedConfig,
    rule: "the destination names both id and name",
    value: { browser: allCategories, storage: { enabled: true }, export: { otlp: { destination: { name: "a" } } } },
    valid: false,
  },
  { schema: resolvedCategories, rule: "every category", value: allCategories, valid: true },
  { schema: resolvedCategories, rule: "every category is required", value: { ...allCategories, platform: undefined }, valid: false },
  {
    schema: resolvedCategories,
    rule: "control carries its exclusion list",
    value: { ...allCategories, control: { enabled: true } },
    valid: false,
  },
  { schema: resolvedCategories, rule: "no other categories", value: { ...allCategories, monitor: { enabled: true } }, valid: false },

  // TelemetryCategory (the filters' values)
  { schema: telemetryCategory, rule: "enum console", value: "console", valid: true },
  { schema: telemetryCategory, rule: "enum monitor (the hosted service's; matches nothing here)", value: "monitor", valid: true },
  { schema: telemetryCategory, rule: "enum rejects other names", value: "everything", valid: false },

  // TelemetryEvent, its source and its envelope
  { schema: telemetryEvent, rule: "a console line", value: consoleEvent, valid: true },
  { schema: telemetryEvent, rule: "without data", value: { category: "connection", type: "cdp_connect", ts: 1, source: { kind: "kernel_api" } }, valid: true },
  { schema: telemetryEvent, rule: "truncated flag", value: { ...consoleEvent, truncated: true }, valid: true },
  { schema: telemetryEvent, rule: "category is one of the ten", value: { ...consoleEvent, category: "monitor" }, valid: false },
  { schema: telemetryEvent, rule: "type pattern", value: { ...consoleEvent, type: "Console Log" }, valid: false },
  { schema: telemetryEvent, rule: "ts is an integer", value: { ...consoleEvent, ts: 1.5 }, valid: false },
  { schema: telemetryEvent, rule: "source is required", value: { ...consoleEvent, source: undefined }, valid: false },
  { schema: telemetryEvent, rule: "no other properties", value: { ...consoleEvent, seq: 1 }, valid: false },
  { schema: eventSource, rule: "kind and event", value: { kind: "cdp", event: "Runtime.exceptionThrown" }, valid: true },
  { schema: eventSource, rule: "metadata of text", value: { kind: "kernel_api", metadata: { session_id: "S" } }, valid: true },
  { schema: eventSource, rule: "kind is one of four", value: { kind: "page" }, valid: false },
  { schema: eventSource, rule: "metadata values are text", value: { kind: "cdp", metadata: { n: 1 } }, valid: false },
  { schema: envelope, rule: "seq and event", value: { seq: 1, event: consoleEvent }, valid: true },
  { schema: envelope, rule: "seq from 1", value: { seq: 0, event: consoleEvent }, valid: false },
  { schema: envelope, rule: "event is required", value: { seq: 3 }, valid: false },
];
