import { normalizeDomain } from "../credentials/domain-names.js";

/**
 * Identity providers whose sign-in pages take a connection's credentials without being
 * listed in `allowed_domains` (the hosted service's list): each entry allows that host
 * and its subdomains.
 */
export const SSO_PROVIDER_DOMAINS: readonly string[] = [
  "accounts.google.com",
  "login.microsoftonline.com",
  "login.live.com",
  "okta.com",
  "oktapreview.com",
  "auth0.com",
  "appleid.apple.com",
  "github.com",
  "facebook.com",
  "linkedin.com",
  "amazoncognito.com",
  "onelogin.com",
  "pingone.com",
  "pingidentity.com",
];

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/** Whether `host` is `domain` or one of its subdomains. */
export function isWithin(host: string | undefined, domain: string): boolean {
  return host !== undefined && (host === domain || host.endsWith(`.${domain}`));
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
