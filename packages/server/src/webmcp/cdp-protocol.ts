/**
 * The parts of the DevTools protocol the WebMCP bridge reads, as Chromium 156 sends them
 * (see `shared/reference/cdp-webmcp-domain.chromium-156.json` for the `WebMCP` domain).
 * Every value here comes from the browser and, through it, from pages: fields are read
 * defensively, never trusted to have the declared types.
 */

/** `Target.TargetInfo`. */
export interface TargetInfo {
  targetId: string;
  type: string;
  title: string;
  url: string;
}

/** `Page.Frame`, the fields the bridge reads. */
export interface PageFrame {
  id: string;
  parentId?: string;
  url: string;
}

/** `Page.FrameTree`. */
export interface PageFrameTree {
  frame: PageFrame;
  childFrames?: PageFrameTree[];
}

/** `WebMCP.Annotation`. */
export interface WebMcpAnnotation {
  readOnly?: boolean;
  untrustedContent?: boolean;
  consequential?: boolean;
  debugging?: boolean;
  autosubmit?: boolean;
}

/** `WebMCP.Tool`. */
export interface WebMcpProtocolTool {
  name: string;
  description: string;
  inputSchema?: Record<string, unknown>;
  annotations?: WebMcpAnnotation;
  frameId: string;
  backendNodeId?: number;
}

/** `WebMCP.RemovedTool`. */
export interface WebMcpRemovedTool {
  name: string;
  frameId: string;
}

/** `WebMCP.toolResponded`. */
export interface ToolRespondedEvent {
  invocationId: string;
  status: "Completed" | "Canceled" | "Error";
  output?: unknown;
  errorText?: string;
  exception?: { description?: string };
  /** Set by the service, not the browser: the event was this many bytes, too large to relay, and its output is gone. */
  outputDroppedBytes?: number;
}

/** `WebMCP.toolInvoked`. */
export interface ToolInvokedEvent {
  toolName: string;
  frameId: string;
  invocationId: string;
}
