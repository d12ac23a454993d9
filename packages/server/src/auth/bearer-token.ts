import { UnauthorizedError } from "../http/api-errors.js";

const HOW_TO = 'Send a valid API key as "Authorization: Bearer <key>".';

/**
 * Whether a request carries a credential at all: an `Authorization` header that is not
 * empty ({@link bearerToken} answers an empty one as missing). Malformed ones count.
 */
export function hasAuthorization(header: string | undefined): header is string {
  return header !== undefined && header !== "";
}

/** The token of an `Authorization: Bearer <token>` header, or `undefined` for a missing or malformed one; requests and upgrades read it alike. */
export function parseBearer(header: string | undefined): string | undefined {
  return header === undefined ? undefined : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)?.[1];
}

/** The token of an `Authorization: Bearer <token>` header; a missing or malformed header is 401. */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header === "") throw new UnauthorizedError(`The Authorization header is missing. ${HOW_TO}`);
  const token = parseBearer(header);
  if (token === undefined) throw new UnauthorizedError(`The Authorization header is not a bearer token. ${HOW_TO}`);
  return token;
}

/** The 401 for a well-formed token that names no key. */
export function unknownTokenError(): UnauthorizedError {
  return new UnauthorizedError(`The bearer token is not a valid API key (revoked, mistyped, or from another server). ${HOW_TO}`);
}
