// The login sites driven with plain fetch, as a browser would: redirects followed by hand,
// cookies kept per host, forms posted as application/x-www-form-urlencoded.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LoginHost, type LoginSites, startLoginSites, totp } from "../src/login-sites.mjs";

let sites: LoginSites;
beforeAll(async () => {
  sites = await startLoginSites();
});
afterAll(async () => {
  await sites?.close();
});

type Page = { status: number; url: string; html: string };

/** A browser without JavaScript: one cookie jar per host, redirects followed by hand. */
class Browser {
  readonly #cookies = new Map<string, Map<string, string>>();

  async get(url: string): Promise<Page> {
    return this.#follow(url, { method: "GET" });
  }

  async post(url: string, fields: Record<string, string>): Promise<Page> {
    return this.#follow(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** The answer to one request, its cookies kept, without following a redirect. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const host = new URL(url).hostname;
    const jar = this.#cookies.get(host) ?? new Map<string, string>();
    this.#cookies.set(host, jar);
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await fetch(url, { ...init, redirect: "manual", headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) } });
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(";");
      const [name, ...value] = pair!.split("=");
      jar.set(name!.trim(), value.join("="));
    }
    return response;
  }

  async #follow(url: string, init: RequestInit): Promise<Page> {
    let response = await this.fetch(url, init);
    for (let hops = 0; response.status >= 300 && response.status < 400; hops++) {
      if (hops === 10) throw new Error("too many redirects");
      url = new URL(response.headers.get("location")!, url).href;
      response = await this.fetch(url);
    }
    return { status: response.status, url, html: await response.text() };
  }
}

/** The value of the hidden input `name` of a page. */
function hiddenValue(html: string, name: string): string {
  const value = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1];
  if (value === undefined) throw new Error(`no hidden ${name} in ${html}`);
  return value;
}

const SIGNED_IN = "<h1>Account</h1><p>Signed in as ada@example.com</p>";

/** A 6-digit code that is none of the accepted ones (previous, current, next step). */
function wrongCode(): string {
  const accepted = [-30_000, 0, 30_000].map((offset) => totp(sites.user.totpSecret, Date.now() + offset));
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, "0");
    if (!accepted.includes(code)) return code;
  }
}

describe("totp", () => {
  it("computes RFC 6238's SHA1 test vectors (6 digits)", () => {
    // The RFC's secret is the ASCII "12345678901234567890".
    const secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
    expect(totp(secret, 59_000)).toBe("287082");
    expect(totp(secret, 1111111109_000)).toBe("081804");
    expect(totp(secret, 1111111111_000)).toBe("050471");
    expect(totp(secret, 1234567890_000)).toBe("005924");
    expect(totp(secret, 2000000000_000)).toBe("279037");
    expect(totp(secret.toLowerCase(), 59_000)).toBe("287082");
  });
});

describe("login sites", () => {
  it("answers on both hosts, with the account pages behind a login", async () => {
    const browser = new Browser();
    for (const host of ["localhost", "127.0.0.1"] as const) {
      const page = await browser.get(sites.url(host, "/password/"));
      expect(page.url).toBe(sites.url(host, "/password/login"));
      expect(page.html).toContain('<input id="email" name="email" type="email" autocomplete="username"');
      expect(page.html).toContain('<input id="password" name="password" type="password" autocomplete="current-password"');
      expect(page.html).toContain('<button type="submit">Sign in</button>');
    }
    expect((await browser.get(sites.url("localhost", "/nowhere"))).status).toBe(404);
  });

  it("password: the right password signs in with a session cookie; a wrong one shows the alert with the email kept", async () => {
    const browser = new Browser();
    const wrong = await browser.post(sites.url("127.0.0.1", "/password/login"), { email: "ada@example.com", password: "nope" });
    expect(wrong.status).toBe(200);
    expect(wrong.html).toContain('<p role="alert" class="error">Incorrect email or password.</p>');
    expect(wrong.html).toContain('value="ada@example.com"');

    const login = await browser.fetch(sites.url("127.0.0.1", "/password/login"), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email: sites.user.username, password: sites.user.password }).toString(),
    });
    expect(login.status).toBe(302);
    expect(login.headers.get("location")).toBe("/password/account");
    expect(login.headers.get("set-cookie")).toMatch(/^password_session=[0-9a-f]+; Path=\/password\/; HttpOnly; SameSite=Lax$/);
    const account = await browser.get(sites.url("127.0.0.1", "/password/account"));
    expect([account.status, account.html]).toEqual([200, expect.stringContaining(SIGNED_IN)]);
    // Already signed in: the login page sends to the account.
    expect((await browser.get(sites.url("127.0.0.1", "/password/login"))).url).toBe(sites.url("127.0.0.1", "/password/account"));
    // The other host is another domain: no session there.
    expect((await browser.get(sites.url("localhost", "/password/account"))).url).toBe(sites.url("localhost", "/password/login"));
  });

  it("two-step: the email, then the password with a step token", async () => {
    const browser = new Browser();
    const first = await browser.get(sites.url("localhost", "/two-step/login"));
    expect(first.html).toContain('<button type="submit">Next</button>');
    expect(first.html).not.toContain('type="password"');
    const second = await browser.post(sites.url("localhost", "/two-step/login"), { email: "ada@example.com" });
    expect(second.html).toContain("<p>ada@example.com</p>");
    expect(second.html).not.toContain('type="email"');
    const step = hiddenValue(second.html, "step");
    const wrong = await browser.post(sites.url("localhost", "/two-step/password"), { step, password: "nope" });
    expect(wrong.html).toContain('<p role="alert" class="error">Incorrect email or password.</p>');
    const done = await browser.post(sites.url("localhost", "/two-step/password"), { step, password: sites.user.password });
    expect(done.html).toContain(SIGNED_IN);
  });

  it("totp: accepts a code of the secret and refuses another", async () => {
    const browser = new Browser();
    const codePage = await browser.post(sites.url("127.0.0.1", "/totp/login"), { email: sites.user.username, password: sites.user.password });
    expect(codePage.url).toMatch(/\/totp\/verify\?challenge=/);
    expect(codePage.html).toContain('<label for="code">Authentication code</label>');
    expect(codePage.html).toContain('inputmode="numeric" autocomplete="one-time-code"');
    const challenge = hiddenValue(codePage.html, "challenge");
    const wrong = await browser.post(sites.url("127.0.0.1", "/totp/verify"), { challenge, code: wrongCode() });
    expect(wrong.html).toContain(`<p role="alert" class="error">That code didn't work.</p>`);
    const done = await browser.post(sites.url("127.0.0.1", "/totp/verify"), { challenge, code: totp(sites.user.totpSecret) });
    expect(done.html).toContain(SIGNED_IN);
  });

  it("mfa: the chooser leads to the authenticator's code or to the texted code", async () => {
    for (const [method, button, label, code] of [
      ["totp", "Use an authenticator app", "Authentication code", () => totp(sites.user.totpSecret)],
      ["sms", "Text me a code", "Verification code", () => "424242"],
    ] as const) {
      const browser = new Browser();
      const chooser = await browser.post(sites.url("localhost", "/mfa/login"), { email: sites.user.username, password: sites.user.password });
      expect(chooser.html).toContain("<h1>How do you want to verify it's you?</h1>");
      expect(chooser.html).toContain(`<input type="hidden" name="method" value="${method}">\n<button type="submit">${button}</button>`);
      const challenge = hiddenValue(chooser.html, "challenge");
      const codePage = await browser.post(sites.url("localhost", "/mfa/choose"), { challenge, method });
      expect(codePage.html).toContain(`<label for="code">${label}</label>`);
      const wrong = await browser.post(sites.url("localhost", "/mfa/verify"), { challenge, code: method === "sms" ? "123456" : wrongCode() });
      expect(wrong.html).toContain("That code didn't work.");
      const done = await browser.post(sites.url("localhost", "/mfa/verify"), { challenge, code: code() });
      expect(done.html).toContain(SIGNED_IN);
    }
  });

  it("sso: the identity provider is on the other host and sends back with a ticket", async () => {
    for (const [host, idpHost] of [
      ["localhost", "127.0.0.1"],
      ["127.0.0.1", "localhost"],
    ] as const) {
      const browser = new Browser();
      const login = await browser.get(sites.url(host, "/sso/login"));
      expect(login.html).not.toContain('type="password"');
      const href = /<a class="button" href="([^"]+)">Sign in with Example ID<\/a>/.exec(login.html)?.[1]?.replaceAll("&amp;", "&");
      expect(href).toBe(sites.url(idpHost, "/idp/login?return=%2Fsso%2Fcallback"));
      const idp = await browser.get(href!);
      expect(idp.html).toContain('type="password"');
      const returnPath = hiddenValue(idp.html, "return");
      const wrong = await browser.post(sites.url(idpHost, "/idp/login"), { return: returnPath, email: sites.user.username, password: "nope" });
      expect(wrong.html).toContain("Incorrect email or password.");
      const done = await browser.post(sites.url(idpHost, "/idp/login"), { return: returnPath, email: sites.user.username, password: sites.user.password });
      expect(done.url).toBe(sites.url(host, "/sso/account"));
      expect(done.html).toContain(SIGNED_IN);
    }
    const posts = sites.submissions("sso");
    expect(posts.map((post) => post.host)).toEqual(["127.0.0.1", "127.0.0.1", "localhost", "localhost"]);
  });

  it("sso: the identity provider sends nowhere but a path of this server", async () => {
    const browser = new Browser();
    for (const target of ["https://evil.example/", "//evil.example/x", "/\\evil.example", "sso/callback", ""]) {
      const page = await browser.get(sites.url("localhost", `/idp/login?return=${encodeURIComponent(target)}`));
      expect(page.status, target).toBe(400);
    }
    // A ticket is good once, on the host it was made for.
    const idp = sites.url("127.0.0.1", "/idp/login");
    const answer = await browser.fetch(idp, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ return: "/sso/callback", email: sites.user.username, password: sites.user.password }).toString(),
    });
    const back = new URL(answer.headers.get("location")!);
    expect(back.origin).toBe(new URL(sites.url("localhost", "/")).origin);
    const wrongHost = await browser.get(sites.url("127.0.0.1", `/sso/callback${back.search}`));
    expect(wrongHost.url).toBe(sites.url("127.0.0.1", "/sso/login"));
  });

  it("email-link: waits until the emailed link is opened, then signs in", async () => {
    const browser = new Browser();
    expect(sites.pendingEmailLink()).toBeUndefined();
    const sent = await browser.post(sites.url("localhost", "/email-link/login"), { email: sites.user.username });
    expect(sent.html).toContain("<h1>Check your email</h1>\n<p>We sent a sign-in link to ada@example.com.</p>");
    const attempt = new URL(sent.url).searchParams.get("attempt")!;
    expect(sent.html).toContain("/email-link/status?attempt=");
    const status = async () => (await (await browser.fetch(sites.url("localhost", `/email-link/status?attempt=${attempt}`))).json()).status;
    expect(await status()).toBe("pending");
    expect((await browser.get(sites.url("localhost", "/email-link/account"))).url).toBe(sites.url("localhost", "/email-link/login"));

    const link = sites.pendingEmailLink()!;
    expect(link).toMatch(new RegExp(`^${sites.url("localhost", "/email-link/approve?token=").replace(/[.?]/g, "\\$&")}[0-9a-f]+$`));
    const approved = await fetch(link);
    expect(await approved.text()).toContain("Sign-in approved. You can close this tab.");
    expect(sites.pendingEmailLink()).toBeUndefined();
    expect(await status()).toBe("approved");
    expect((await browser.get(sites.url("localhost", "/email-link/account"))).html).toContain(SIGNED_IN);
  });

  it("expireSessions ends every session", async () => {
    const browser = new Browser();
    await browser.post(sites.url("localhost", "/password/login"), { email: sites.user.username, password: sites.user.password });
    expect((await browser.get(sites.url("localhost", "/password/account"))).html).toContain(SIGNED_IN);
    sites.expireSessions();
    expect((await browser.get(sites.url("localhost", "/password/account"))).url).toBe(sites.url("localhost", "/password/login"));
  });

  it("records every post with the host it went to", async () => {
    const browser = new Browser();
    const before = sites.submissions("lookalike").length;
    const page = await browser.get(sites.url("127.0.0.1", "/lookalike/login"));
    const password = await browser.get(sites.url("127.0.0.1", "/password/login"));
    expect(page.html.replaceAll("/lookalike/", "/password/")).toBe(password.html);
    await browser.post(sites.url("127.0.0.1", "/lookalike/login"), { email: sites.user.username, password: sites.user.password });
    const posts = sites.submissions("lookalike");
    expect(posts.slice(before)).toEqual([{ host: "127.0.0.1", fields: { email: sites.user.username, password: sites.user.password } }]);
    const hosts = new Set(sites.submissions("password").map((post) => post.host));
    expect(hosts).toEqual(new Set<LoginHost>(["127.0.0.1", "localhost"]));
  });
});

describe("the slow site", () => {
  it("never answers its login page, and close() ends the waiting request", async () => {
    const slow = await startLoginSites();
    const request = fetch(slow.url("localhost", "/slow/login")).then(
      () => "answered",
      () => "failed",
    );
    const early = await Promise.race([request, new Promise((resolve) => setTimeout(() => resolve("waiting"), 300))]);
    expect(early).toBe("waiting");
    await slow.close();
    expect(await request).toBe("failed");
  });
});
