import { BlockList, isIP } from "node:net";
import { networkInterfaces } from "node:os";

/**
 * Address ranges a browser may not reach by default: nothing of this host, of its private
 * network, or of special-purpose space. Loopback and the host's own addresses would reach
 * the server itself and every local service; RFC 1918, shared (CGNAT) and unique-local space
 * the private network; link-local the cloud metadata endpoint (169.254.169.254). The rest
 * are ranges no public web server lives in (IANA special-purpose registries), refused so
 * that no translation trick (6to4, NAT64, Teredo, IPv4-mapped) leads back into the ones above.
 */
const BLOCKED_IPV4: readonly (readonly [string, number])[] = [
  ["0.0.0.0", 8], // "this network"; 0.0.0.0 reaches the local host
  ["10.0.0.0", 8], // RFC 1918
  ["100.64.0.0", 10], // shared address space (carrier-grade NAT)
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12], // RFC 1918
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // RFC 1918
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and the broadcast address
];

const BLOCKED_IPV6: readonly (readonly [string, number])[] = [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["::", 96], // IPv4-compatible (deprecated), embeds IPv4
  ["64:ff9b::", 96], // NAT64, embeds IPv4
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64], // discard-only
  ["2001::", 32], // Teredo, embeds IPv4
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4, embeds IPv4
  ["fc00::", 7], // unique-local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
];

/** What an {@link EgressPolicy} decided about one address, with the reason when refused. */
export type EgressVerdict = { allowed: true } | { allowed: false; reason: string };

/** Settings of {@link EgressPolicy}. */
export interface EgressPolicyOptions {
  /**
   * Let browsers reach loopback, private and link-local addresses and this host
   * (`--allow-private-network`), for local development and tests serving pages on 127.0.0.1.
   */
  allowPrivateNetwork: boolean;
  /** Addresses of this host, refused like loopback. Default: every address of every interface, read once. */
  hostAddresses?: readonly string[];
}

/**
 * Which IP addresses a browser may connect to. The check is on addresses, never names: the
 * egress proxy resolves a name itself and connects to the very address it checked, so a
 * name that resolves to 127.0.0.1 is refused and DNS cannot rebind between check and
 * connect. IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) are checked as the IPv4 address
 * they carry.
 */
export class EgressPolicy {
  /** Whether private and local addresses are let through. */
  readonly allowPrivateNetwork: boolean;
  readonly #blocked = new BlockList();
  readonly #host = new BlockList();

  constructor(options: EgressPolicyOptions) {
    this.allowPrivateNetwork = options.allowPrivateNetwork;
    for (const [network, prefix] of BLOCKED_IPV4) this.#blocked.addSubnet(network, prefix, "ipv4");
    for (const [network, prefix] of BLOCKED_IPV6) this.#blocked.addSubnet(network, prefix, "ipv6");
    for (const address of options.hostAddresses ?? interfaceAddresses()) {
      const family = isIP(address);
      if (family !== 0) this.#host.addAddress(address, family === 4 ? "ipv4" : "ipv6");
    }
  }

  /** Whether a browser may connect to `address` (an IP literal; anything else is refused). */
  check(address: string): EgressVerdict {
    const plain = address.split("%")[0] as string;
    const family = isIP(plain);
    if (family === 0) return { allowed: false, reason: `"${address}" is not an IP address` };
    if (this.allowPrivateNetwork) return { allowed: true };
    const type = family === 4 ? "ipv4" : "ipv6";
    if (this.#host.check(plain, type)) return { allowed: false, reason: `${plain} is an address of this host` };
    if (this.#blocked.check(plain, type)) return { allowed: false, reason: `${plain} is a loopback, private, link-local or special-purpose address` };
    return { allowed: true };
  }
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
}
