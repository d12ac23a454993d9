import { normalizeDomain } from "../credentials/domain-names.js";

/**
 * Identity providers whose sign-in pages take a connection's values without being listed
 * in `allowed_domains`: each entry allows that host and its subdomains. Only providers
 * that serve their own sign-in page: hosts where anyone can open a tenant with a login
 * page of their own (Okta, Auth0, Cognito, OneLogin, Ping) must be listed by the
 * connection, the tenant's host exactly.
 */
export const SSO_PROVIDER_DOMAINS: readonly string[] = [
  "accounts.google.com",
  "login.microsoftonline.com",
  "login.live.com",
  "appleid.apple.com",
  "github.com",
  "facebook.com",
  "linkedin.com",
];

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

const IP_ADDRESS = /^(\d{1,3}(\.\d{1,3}){3}|\[?[0-9a-f:.]*:[0-9a-f:.]*\]?)$/i;

/** Whether `host` is `domain` or one of its subdomains; an IP address is only itself (`0.1` is no root of `10.0.0.1`). */
export function isWithin(host: string | undefined, domain: string): boolean {
  if (host === undefined || domain === "") return false;
  if (IP_ADDRESS.test(host) || IP_ADDRESS.test(domain)) return host === domain;
  return host === domain || host.endsWith(`.${domain}`);
}

/**
 * Whether a login robot may type a connection's values into a page at `url`: its host is
 * the connection's domain, one of its `allowed_domains` or a well-known identity
 * provider (each with its subdomains), and the page came over https, or over http from
 * this machine (loopback), never in the clear across a network.
 */
export function mayTypeCredentials(url: string, domain: string, allowedDomains: readonly string[]): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  const host = parsed.hostname.toLowerCase();
  if (parsed.protocol !== "https:" && !(parsed.protocol === "http:" && LOOPBACK.test(host))) return false;
  return [domain, ...allowedDomains, ...SSO_PROVIDER_DOMAINS].some((root) => isWithin(host, normalizeDomain(root)));
}

/** The host of `url` as a connection's domain reads it, or `undefined` when it is no URL. */
export function hostOf(url: string): string | undefined {
  try {
    return normalizeDomain(new URL(url).hostname);
  } catch {
    return undefined;
  }
}
