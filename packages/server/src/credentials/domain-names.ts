/**
 * A domain as stored: lower case, without a leading `*.` and then a leading `www.` (the
 * seed's rule for `allowed_domains`), each removed only when a name with a dot remains,
 * so `www.com` stays itself.
 */
export function normalizeDomain(domain: string): string {
  let host = domain.toLowerCase();
  for (const prefix of ["*.", "www."]) {
    if (host.startsWith(prefix) && host.slice(prefix.length).includes(".")) host = host.slice(prefix.length);
  }
  return host;
}

/**
 * An `allowed_domains` entry as stored: lower case, a leading `*.` and then a leading
 * `www.` always removed, as the seed's record promises entries never start with either
 * (so `www.com` allows `com`: the caller named that root).
 */
export function normalizeAllowedDomain(domain: string): string {
  let host = domain.toLowerCase();
  for (const prefix of ["*.", "www."]) if (host.startsWith(prefix)) host = host.slice(prefix.length);
  return host;
}
