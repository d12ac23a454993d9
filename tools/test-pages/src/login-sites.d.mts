// Types of login-sites.mjs for the TypeScript tests (the repository sets allowJs: false).

/** The two hostnames of the one server: two different domains (and cookie jars) to a browser. */
export type LoginHost = "localhost" | "127.0.0.1";

/**
 * The sites, each under `/<site>/` with `/<site>/login`, `/<site>/account` and `/<site>/`:
 * - `password`: email and password on one page.
 * - `two-step`: the email ("Next"), then the password on a second page.
 * - `totp`: email and password, then an authenticator (TOTP) code.
 * - `mfa`: email and password, then a choice of authenticator app or text message, then its code (the texted code is `424242`).
 * - `sso`: a "Sign in with Example ID" link to the identity provider at `/idp/login` on the other host, which sends back to `/sso/callback`.
 * - `email-link`: the email, then a page that waits until the emailed link ({@link LoginSites.pendingEmailLink}) is opened.
 * - `slow`: a login page that never answers.
 * - `lookalike`: the `password` site's login page, to be visited on a domain the robot must not sign in to.
 * - `workspace`: email and password, then an account picker ("Choose a workspace": Acme Corp or Beta Labs); the account page says which ("Signed in as ada@example.com to Beta Labs").
 */
export type LoginSiteName = "password" | "two-step" | "totp" | "mfa" | "sso" | "email-link" | "slow" | "lookalike" | "workspace";

/** One form post a site received. */
export interface LoginSubmission {
  /** The hostname it was posted to (without the port). */
  host: LoginHost;
  /** The posted fields, by input name. */
  fields: Record<string, string>;
}

/** The user every site signs in. */
export interface LoginUser {
  readonly username: "ada@example.com";
  readonly password: "correct horse battery";
  /** Base32 TOTP secret (RFC 6238: SHA1, 6 digits, 30 s steps). */
  readonly totpSecret: "JBSWY3DPEHPK3PXP";
}

/**
 * Small, realistic login websites on one server of 127.0.0.1, also reachable as localhost.
 * A successful login sets the HttpOnly cookie `<site>_session` (Path=/<site>/, SameSite=Lax)
 * and redirects to `/<site>/account`, which shows "Signed in as ada@example.com" while the
 * session lasts and redirects to `/<site>/login` otherwise. Sessions live in memory.
 */
export interface LoginSites {
  /** The server's port on both hosts. */
  readonly port: number;
  /** The user every site signs in. */
  readonly user: LoginUser;
  /** The URL of `path` on `host`, as `http://<host>:<port><path>`. */
  url(host: LoginHost, path: string): string;
  /** Ends every session of every site: the next account page redirects to its login page. */
  expireSessions(): void;
  /**
   * The absolute URL (`/email-link/approve?token=…` on the host the sign-in started on) of
   * the newest `email-link` sign-in still waiting for its link to be opened; opening it in any
   * client approves that sign-in. Undefined when none waits.
   */
  pendingEmailLink(): string | undefined;
  /**
   * Every form post `site` received, oldest first, with the host it was posted to. The
   * identity provider's posts (`/idp/login`) count as the `sso` site's.
   */
  submissions(site: string): LoginSubmission[];
  /** Stops the server, ending every open connection (the `slow` site's waiting requests too). */
  close(): Promise<void>;
}

/** Starts the login sites on an ephemeral port of 127.0.0.1, also reachable as localhost. */
export declare function startLoginSites(): Promise<LoginSites>;

/** The RFC 6238 code (SHA1, 6 digits, 30 s steps) of a base32 `secret` at `time` (ms since the epoch, now by default). */
export declare function totp(secret: string, time?: number): string;
