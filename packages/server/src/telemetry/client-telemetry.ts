import type { CommandObserver } from "../cdp/cdp-router.js";
import type { BrowserTelemetry } from "./browser-telemetry.js";

/** Events the service itself produces (its DevTools endpoint, its live view, a browser's end). */
const SERVICE = { kind: "kernel_api" } as const;

/** Milliseconds to the microsecond: enough for a round trip, without float noise in the JSON. */
const ms = (value: number) => Math.round(value * 1000) / 1000;

/**
 * The `cdp_command` reporting of one DevTools client of the browser: a command of a
 * `TelemetryCdpMethod` becomes an event with its method, session, duration and outcome
 * (never its params, which carry what an agent types); an excluded one is only counted.
 */
export function commandReporter(recorder: BrowserTelemetry): CommandObserver {
  return {
    report: (method) => recorder.commandReport(method),
    done: ({ method, sessionId, durationMs, outcome }) => {
      const data: Record<string, unknown> = { method, duration_ms: ms(durationMs), outcome };
      if (sessionId !== undefined) data.session_id = sessionId;
      recorder.emit("control", "cdp_command", { ...SERVICE, event: "cdp_proxy" }, data);
    },
  };
}

/** Why a DevTools client's connection ended, in the SDK's words. */
export type DisconnectReason = "client_close" | "upstream_error" | "context_cancelled";

/**
 * The connection lifecycle of one client (a DevTools client, a live view viewer): its
 * connect event now, and a function that records its disconnect with how long it lasted.
 */
export function connectionEvents(
  recorder: BrowserTelemetry,
  kind: "cdp" | "live_view",
  details: Record<string, unknown> = {},
): (end: Record<string, unknown>) => void {
  const opened = performance.now();
  recorder.emit("connection", `${kind}_connect`, SERVICE, { ...details });
  return (end) => recorder.emit("connection", `${kind}_disconnect`, SERVICE, { ...details, duration_ms: ms(performance.now() - opened), ...end });
}

/** A system event of the browser's end: a crash, its memory budget, its inactivity timeout. */
export function systemEvent(
  recorder: BrowserTelemetry | undefined,
  type: "service_crashed" | "system_oom_kill" | "system_timeout",
  data: Record<string, unknown>,
): void {
  recorder?.emit("system", type, SERVICE, data);
}
