import { schemaRef, type SchemaCase } from "./types.js";

const at = (name: string, value: unknown, valid: boolean, rule: string): SchemaCase => ({
  schema: schemaRef(name),
  rule,
  value,
  valid,
});

const source = {
  window_id: 1,
  tab_id: 2,
  page_url: "http://127.0.0.1:9000/cart",
  page_title: "Cart",
  frame: null,
};
const frame = { frame_id: 3, url: "http://localhost:9001/widget" };
const tool = {
  tool_ref: "wmt_AAEC",
  name: "add_to_cart",
  description: "Add a product to the cart.",
  input_schema: { type: "object", properties: { sku: { type: "string" } } },
  annotations: { read_only: false, untrusted_content: true, consequential: true, autosubmit: false },
  source,
};
const { annotations: _a, ...toolWithoutAnnotations } = tool;

/** WebMCP tools, snapshots, invoke requests and results. */
export const webmcpCases: readonly SchemaCase[] = [
  at("WebMcpToolAnnotations", { read_only: true, untrusted_content: false, consequential: false, autosubmit: true }, true, "all four hints"),
  at("WebMcpToolAnnotations", {}, true, "no hints"),
  at("WebMcpToolAnnotations", { read_only: "yes" }, false, "hints are booleans"),
  at("WebMcpToolAnnotations", { readOnly: true }, false, "no other properties (camelCase CDP names)"),
  at("WebMcpToolFrame", frame, true, "frame id and url"),
  at("WebMcpToolFrame", { ...frame, url: "http://localhost:9001/widget#top" }, false, "frame url has no fragment"),
  at("WebMcpToolFrame", { ...frame, frame_id: "F1A2" }, false, "frame_id is numeric"),
  at("WebMcpToolFrame", { url: frame.url }, false, "frame_id is required"),
  at("WebMcpToolSource", source, true, "top-level registration"),
  at("WebMcpToolSource", { ...source, frame }, true, "registration in a frame"),
  at("WebMcpToolSource", { ...source, page_url: "http://127.0.0.1:9000/cart#items" }, false, "page_url has no fragment"),
  at("WebMcpToolSource", { ...source, tab_id: "2" }, false, "tab_id is numeric"),
  at("WebMcpToolSource", { ...source, window_id: 1.5 }, false, "window_id is an integer"),
  at("WebMcpToolSource", (({ frame: _f, ...rest }) => rest)(source), false, "frame is required (null when top-level)"),
  at("WebMcpToolSource", { ...source, frame: { frame_id: 1 } }, false, "frame needs url"),
  at("WebMcpTool", tool, true, "full tool"),
  at("WebMcpTool", toolWithoutAnnotations, true, "annotations are optional"),
  at("WebMcpTool", { ...tool, input_schema: {} }, true, "empty input schema"),
  at("WebMcpTool", { ...tool, tool_ref: "" }, false, "tool_ref is not empty"),
  at("WebMcpTool", (({ source: _s, ...rest }) => rest)(tool), false, "source is required"),
  at("WebMcpTool", { ...tool, input_schema: "string" }, false, "input_schema is an object"),
  at("WebMcpTool", { ...tool, frame_id: "x" }, false, "no other properties"),
  at("WebMcpToolList", { tools: [] }, true, "empty snapshot"),
  at("WebMcpToolList", { tools: [tool, { ...tool, tool_ref: "wmt_AAED", source: { ...source, frame } }] }, true, "same name in page and frame"),
  at("WebMcpToolList", {}, false, "tools is required"),
  at("WebMcpToolList", { tools: [{ name: "x" }] }, false, "every tool is a full tool"),

  at("WebMcpInvokeRequest", { tool_ref: "wmt_AAEC", input: {} }, true, "timeout_sec defaults"),
  at("WebMcpInvokeRequest", { tool_ref: "wmt_AAEC", input: { sku: "A1" }, timeout_sec: 1 }, true, "timeout_sec 1"),
  at("WebMcpInvokeRequest", { tool_ref: "wmt_AAEC", input: {}, timeout_sec: 120 }, true, "timeout_sec 120"),
  at("WebMcpInvokeRequest", { tool_ref: "wmt_AAEC", input: {}, timeout_sec: 0 }, false, "timeout_sec below 1"),
  at("WebMcpInvokeRequest", { tool_ref: "wmt_AAEC", input: {}, timeout_sec: 121 }, false, "timeout_sec above 120"),
  at("WebMcpInvokeRequest", { tool_ref: "wmt_AAEC", input: {}, timeout_sec: 1.5 }, false, "timeout_sec is an integer"),
  at("WebMcpInvokeRequest", { tool_ref: "wmt_AAEC" }, false, "input is required ({} when none)"),
  at("WebMcpInvokeRequest", { tool_ref: "wmt_AAEC", input: [] }, false, "input is an object"),
  at("WebMcpInvokeRequest", { tool_ref: "", input: {} }, false, "tool_ref is not empty"),
  at("WebMcpInvokeRequest", { input: {} }, false, "tool_ref is required"),
  at("WebMcpInvokeRequest", { tool_ref: "wmt_AAEC", input: {}, retries: 2 }, false, "no other properties"),

  at("WebMcpInvocationStatus", "completed", true, "enum completed"),
  at("WebMcpInvocationStatus", "canceled", true, "enum canceled"),
  at("WebMcpInvocationStatus", "error", true, "enum error"),
  at("WebMcpInvocationStatus", "awaiting_submission", true, "enum awaiting_submission"),
  at("WebMcpInvocationStatus", "Completed", false, "enum rejects CDP spelling"),
  at("WebMcpAwaitingSubmissionOutput", { form_populated: true, submitted: false }, true, "populated, not submitted"),
  at("WebMcpAwaitingSubmissionOutput", { form_populated: true, submitted: true }, false, "submitted is false"),
  at("WebMcpAwaitingSubmissionOutput", { form_populated: false, submitted: false }, false, "form_populated is true"),
  at("WebMcpAwaitingSubmissionOutput", { form_populated: true }, false, "submitted is required"),
  at("WebMcpInvocationResult", { invocation_id: "inv_1", status: "completed", output: { cart_size: 3 } }, true, "completed with output"),
  at("WebMcpInvocationResult", { invocation_id: "inv_1", status: "completed", output: "plain text" }, true, "output of any shape"),
  at("WebMcpInvocationResult", { invocation_id: "inv_1", status: "error", error_text: "boom" }, true, "error with error_text"),
  at("WebMcpInvocationResult", { invocation_id: "inv_1", status: "canceled" }, true, "canceled without output"),
  at("WebMcpInvocationResult", { invocation_id: "inv_1", status: "awaiting_submission", output: { form_populated: true, submitted: false } }, true, "awaiting_submission output shape"),
  at("WebMcpInvocationResult", { invocation_id: "inv_1", status: "awaiting_submission" }, false, "awaiting_submission needs output"),
  at("WebMcpInvocationResult", { invocation_id: "inv_1", status: "awaiting_submission", output: { ok: true } }, false, "awaiting_submission output has the fixed shape"),
  at("WebMcpInvocationResult", { invocation_id: "inv_1", status: "done" }, false, "status enum"),
  at("WebMcpInvocationResult", { status: "completed" }, false, "invocation_id is required"),
  at("WebMcpInvocationResult", { invocation_id: "inv_1", status: "error", error_text: 5 }, false, "error_text is a string"),
  at("WebMcpInvocationResult", { invocation_id: "inv_1", status: "completed", retried: false }, false, "no other properties"),
];
