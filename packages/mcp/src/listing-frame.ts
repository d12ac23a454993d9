import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { CatalogState } from "./tool-catalog.js";

/**
 * The bytes of `message` as one JSON line, or `undefined` when it is not the answer to a
 * `tools/list` with exactly the catalog's current listing (then the caller serializes it
 * as usual). The listing is the bulk of the bridge's traffic (hundreds of KB at tens of
 * tabs) and changes only with the snapshot, so its JSON, made once per change, is sent
 * as is; the rest (`jsonrpc`, `id`) is serialized per message. The listing is recognised
 * by identity (`result.tools === state.tools`) and only in a result with no other key,
 * so any other message, or an answer built from an older snapshot, is never rewritten.
 */
export function listingFrame(message: JSONRPCMessage, state: CatalogState): Buffer[] | undefined {
  if (!("result" in message) || !("id" in message)) return undefined;
  const { result } = message;
  if (result.tools !== state.tools || Object.keys(result).length !== 1 || Object.keys(message).length !== 3) return undefined;
  return [Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"tools":`), state.toolsJson, Buffer.from("}}\n")];
}
