// The formats the spec uses, as JSON Schema 2020-12 defines them. The generator lists
// which formats this module provides (tools/codegen/src/validators-compile.mjs).

const isLeapYear = (year: number): boolean => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);

const daysPerMonth = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

// Character codes; the date-time check reads characters one by one, with no allocation,
// because validators call it for every date-time of every record.
const [zero, nine, dash, plus, colon, dot] = ["0", "9", "-", "+", ":", "."].map((c) => c.charCodeAt(0)) as [number, number, number, number, number, number];

const isDigit = (code: number): boolean => code >= zero && code <= nine;

/** The number that the characters in [start, end) spell, or -1 if one is not a digit. */
function number(value: string, start: number, end: number): number {
  let result = 0;
  for (let i = start; i < end; i++) {
    const code = value.charCodeAt(i);
    if (!isDigit(code)) return -1;
    result = result * 10 + code - zero;
  }
  return result;
}

/** Minutes east of UTC of the offset (`Z`, `+01:00`) that ends the value from `start`, or undefined if it is not one. */
function offsetMinutes(value: string, start: number): number | undefined {
  const sign = value.charCodeAt(start);
  if (start + 1 === value.length && (value[start] === "Z" || value[start] === "z")) return 0;
  if (start + 6 !== value.length || (sign !== plus && sign !== dash) || value.charCodeAt(start + 3) !== colon) return undefined;
  const hours = number(value, start + 1, start + 3);
  const minutes = number(value, start + 4, start + 6);
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return undefined;
  return (sign === dash ? -1 : 1) * (hours * 60 + minutes);
}

/**
 * `date-time`: RFC 3339's `date-time`, such as `2026-11-02T10:15:00Z` or
 * `2026-11-02T09:58:12.120+01:00`: a real calendar date, a time with seconds, and `Z` or
 * an offset. A leap second (`:60`) is only valid at 23:59 UTC.
 */
export function dateTime(value: string): boolean {
  // YYYY-MM-DDTHH:MM:SS, then an optional fraction and the offset.
  if (value.charCodeAt(4) !== dash || value.charCodeAt(7) !== dash || value.charCodeAt(13) !== colon || value.charCodeAt(16) !== colon) return false;
  if (value[10] !== "T" && value[10] !== "t") return false;
  const year = number(value, 0, 4);
  const month = number(value, 5, 7);
  const day = number(value, 8, 10);
  const hour = number(value, 11, 13);
  const minute = number(value, 14, 16);
  const second = number(value, 17, 19);
  let end = 19;
  if (value.charCodeAt(end) === dot) {
    do end++;
    while (isDigit(value.charCodeAt(end)));
    if (end === 20) return false;
  }
  const offset = offsetMinutes(value, end);
  if (offset === undefined || year < 0 || month < 1 || month > 12 || day < 1) return false;
  if (day > (month === 2 && isLeapYear(year) ? 29 : daysPerMonth[month]!)) return false;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return false;
  if (second < 60) return true;
  return (((hour * 60 + minute - offset) % 1440) + 1440) % 1440 === 23 * 60 + 59;
}

// RFC 3986, appendix A, as one expression (with `%` allowed wherever escapes are, and
// each `%` checked to start an escape apart); an IP literal's address is checked apart.
const unreserved = "A-Za-z0-9\\-._~";
const subDelims = "!$&'()*+,;=";
const chars = (extra: string): string => `[${unreserved}${subDelims}%${extra}]*`;
const scheme = "[A-Za-z][A-Za-z0-9+\\-.]*";
const authority = `(?:${chars(":")}@)?(\\[[^\\]/?#@%]*\\]|${chars("")})(?::\\d*)?`;
const path = chars(":@/");
const uriSyntax = new RegExp(`^${scheme}:(?://${authority}(?:/${path})?|(?!//)${path})(?:\\?${chars(":@/?")})?(?:#${chars(":@/?")})?$`);
const strayPercent = /%(?![0-9A-Fa-f]{2})/;
const ipvFutureSyntax = new RegExp(`^[vV][0-9A-Fa-f]+\\.[${unreserved}${subDelims}:]+$`);
const decOctet = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const ipv4Syntax = new RegExp(`^${decOctet}(?:\\.${decOctet}){3}$`);
const h16Syntax = /^[0-9A-Fa-f]{1,4}$/;

function isIPv6(address: string): boolean {
  // A trailing IPv4 address stands for two 16-bit groups.
  const lastColon = address.lastIndexOf(":");
  const tail = address.slice(lastColon + 1);
  if (tail.includes(".")) {
    if (lastColon < 0 || !ipv4Syntax.test(tail)) return false;
    return isIPv6(`${address.slice(0, lastColon + 1)}0:0`);
  }
  const halves = address.split("::");
  if (halves.length > 2) return false;
  const groups = halves.flatMap((half) => (half === "" ? [] : half.split(":")));
  if (!groups.every((group) => h16Syntax.test(group))) return false;
  return halves.length === 2 ? groups.length <= 7 : groups.length === 8;
}

/**
 * `uri`: an absolute URI as RFC 3986 defines it (a scheme, then the rest in ASCII with
 * `%` escapes), such as `https://example.com/a?b#c`, `ws://127.0.0.1:8787/cdp` or
 * `urn:isbn:0451450523`. A relative reference (`/login`) or a space is not one.
 */
export function uri(value: string): boolean {
  if (!uriSyntax.test(value) || (value.includes("%") && strayPercent.test(value))) return false;
  if (!value.includes("[")) return true;
  const host = uriSyntax.exec(value)?.[1] ?? "";
  if (!host.startsWith("[")) return true;
  const literal = host.slice(1, -1);
  return isIPv6(literal) || ipvFutureSyntax.test(literal);
}
