/**
 * The TCP connections the egress proxy has open on behalf of browsers, by their local end.
 * When a browser may reach this host (`--allow-private-network`) and a page connects to the
 * server's own API, the server sees a peer of 127.0.0.1 like any local client; the peer's
 * port is the local port of one of these connections, which tells the request apart as the
 * browser's (so, for one, a page's wrong credentials never spend the allowance of the
 * address the page shares with the server's real clients).
 */
export class EgressConnections {
  readonly #byLocalEnd = new Map<string, string>();

  /** Records an open connection of `browser` (a label such as `3`) by its local end. */
  add(localAddress: string, localPort: number, browser: string): void {
    this.#byLocalEnd.set(endKey(localAddress, localPort), browser);
  }

  /** Forgets a connection once it has closed. */
  delete(localAddress: string, localPort: number): void {
    this.#byLocalEnd.delete(endKey(localAddress, localPort));
  }

  /** The browser whose egress connection is the peer `remoteAddress:remotePort` of a request to this server, if any. */
  browserOf(remoteAddress: string | undefined, remotePort: number | undefined): string | undefined {
    if (remoteAddress === undefined || remotePort === undefined) return undefined;
    return this.#byLocalEnd.get(endKey(remoteAddress, remotePort));
  }

  /** How many connections are open. */
  get size(): number {
    return this.#byLocalEnd.size;
  }
}

function endKey(address: string, port: number): string {
  // A server listening on "::" sees IPv4 peers as IPv4-mapped addresses.
  const plain = address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
  return `${plain}|${port}`;
}
