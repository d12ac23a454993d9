/** One Server-Sent Events stream read as a client reads it: each `data:` line parsed as JSON. */
export interface FollowedStream {
  /** Every event received so far, in order. */
  events: Record<string, unknown>[];
  /** Resolves with every event once the server ends the stream. */
  ended: Promise<Record<string, unknown>[]>;
  /** Resolves with the first event (past or future) that `match` accepts. */
  next(match: (event: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  /** Stops reading. */
  close(): void;
}

/** Opens `url` with `headers` and follows its events; rejects when the answer is not a 200 event stream. */
export async function followEvents(url: string, headers: Record<string, string>): Promise<FollowedStream> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  if (response.status !== 200 || !String(response.headers.get("content-type")).startsWith("text/event-stream")) {
    throw new Error(`Expected an event stream, got ${response.status}: ${await response.text()}`);
  }
  return followBody(response.body as ReadableStream<Uint8Array>, controller);
}

/** Follows the events of an event stream's `body` (a client's `follow()` gives one); `controller` aborts its request. */
export function followBody(body: ReadableStream<Uint8Array>, controller: AbortController): FollowedStream {
  const events: Record<string, unknown>[] = [];
  const waiters: { match: (event: Record<string, unknown>) => boolean; resolve: (event: Record<string, unknown>) => void }[] = [];
  const ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block
            .split("\n")
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).trimStart())
            .join("\n");
          if (data !== "") {
            const event = JSON.parse(data) as Record<string, unknown>;
            events.push(event);
            for (const waiter of [...waiters]) {
              if (waiter.match(event)) {
                waiters.splice(waiters.indexOf(waiter), 1);
                waiter.resolve(event);
              }
            }
          }
          end = buffer.indexOf("\n\n");
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
    return events;
  })();
  return {
    events,
    ended,
    next(match) {
      const seen = events.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        ended.then(() => reject(new Error(`The stream ended without the event; it sent:\n${JSON.stringify(events, null, 2)}`)), reject);
      });
    },
    close: () => controller.abort(),
  };
}
