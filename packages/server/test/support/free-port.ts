import { once } from "node:events";
import { createServer } from "node:net";

/** A TCP port of 127.0.0.1 free a moment ago, for a server a test starts with a port of its choosing. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
