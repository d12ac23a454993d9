import { compileInputSchema, WebMcpHelpersError } from "@browser-service/webmcp-helpers";

/** What an MCP client is shown as a tool's `inputSchema`. */
export interface McpInputSchema {
  /** An object schema (`type: "object"`), as MCP requires. */
  schema: { type: "object"; [keyword: string]: unknown };
  /** Why the page's own schema is not shown, when it is not; `undefined` when it is. */
  withheld: string | undefined;
}

/** Stands in for a page schema that is not shown: any object; the safe validator checks the page's schema at call time. */
const permissive = (): McpInputSchema["schema"] => ({ type: "object", additionalProperties: true });

/**
 * The first `$`-keyword in the schema (`$ref`, `$id`, `$schema`, `$defs`, ...), if any.
 * A client may resolve a reference, or fetch a meta-schema, from a URL a page chose, so
 * any key that starts with `$` (even a property named so) keeps the schema back.
 */
function dollarKey(value: unknown): string | undefined {
  const stack = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    for (const [key, child] of Object.entries(node)) {
      if (key.startsWith("$")) return key;
      stack.push(child);
    }
  }
  return undefined;
}

/**
 * The `inputSchema` to show for a page's `input_schema`: the page's own when it is a
 * safe object schema (an object whose `type` is `"object"`, which the helpers' safe
 * validator accepts within its default budgets, with no `$`-keyword), else a permissive
 * object schema and the reason. Either way `invokeTool` checks the input against the
 * page's schema with the safe validator before anything is sent.
 */
export function mcpInputSchema(pageSchema: unknown): McpInputSchema {
  if (typeof pageSchema !== "object" || pageSchema === null || Array.isArray(pageSchema)) {
    return { schema: permissive(), withheld: "it is not a JSON object" };
  }
  const root = pageSchema as Record<string, unknown>;
  if (root.type !== "object") return { schema: permissive(), withheld: 'its root is not `"type": "object"`' };
  const dollar = dollarKey(root);
  if (dollar !== undefined) return { schema: permissive(), withheld: "it holds a `$` keyword, which a client might resolve from elsewhere" };
  try {
    compileInputSchema(root);
  } catch (error) {
    if (!(error instanceof WebMcpHelpersError)) throw error;
    return { schema: permissive(), withheld: `the safe validator refuses it (${error.code})` };
  }
  return { schema: root as McpInputSchema["schema"], withheld: undefined };
}
