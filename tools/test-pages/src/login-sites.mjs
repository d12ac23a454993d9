// Small login websites for the tests of the managed-auth login robot: one server, nine
// sites under their own path prefix, each signing in the same user its own way. The robot
// finds forms as it would on real sites, so the pages are ordinary HTML (labels,
// autocomplete attributes, submit buttons) with no test-only hooks. JavaScript typed by
// login-sites.d.mts, like page-server.mjs, so that Node runs it as it is.
import { createHmac, randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:http";

const USER = Object.freeze({ username: "ada@example.com", password: "correct horse battery", totpSecret: "JBSWY3DPEHPK3PXP" });
/** The code the `mfa` site "texts" to the user's phone. */
const SMS_CODE = "424242";
const HOSTS = new Set(["localhost", "127.0.0.1"]);
const SITES = new Set(["password", "two-step", "totp", "mfa", "sso", "email-link", "slow", "lookalike", "workspace"]);
/** The accounts the `workspace` site's user may sign in to, by id. */
const WORKSPACES = Object.freeze({ acme: "Acme Corp", beta: "Beta Labs" });
/** What each site calls itself in its titles: the lookalike copies the `password` site. */
const BRANDS = {
  password: "Ledger",
  "two-step": "Harbor",
  totp: "Vault",
  mfa: "Summit",
  sso: "Example Shop",
  "email-link": "Postbox",
  slow: "Tortoise",
  lookalike: "Ledger",
  workspace: "Teamroom",
};
const MAX_BODY = 64 * 1024;

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** The bytes of a base32 (RFC 4648) secret; case, spaces and padding are ignored. */
function base32Decode(text) {
  const bytes = [];
  let bits = 0;
  let value = 0;
  for (const char of text.toUpperCase().replace(/[\s=]/g, "")) {
    const index = BASE32.indexOf(char);
    if (index === -1) throw new Error(`not a base32 secret: ${JSON.stringify(text)}`);
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((value >>> bits) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

/** RFC 4226 HOTP, 6 digits, HMAC-SHA1. */
function hotp(key, counter) {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const digest = createHmac("sha1", key).update(message).digest();
  const offset = digest[digest.length - 1] & 0x0f;
  const binary = digest.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 1_000_000).padStart(6, "0");
}

/** The RFC 6238 code (SHA1, 6 digits, 30 s steps) of a base32 `secret` at `time` (ms since the epoch). */
export function totp(secret, time = Date.now()) {
  return hotp(base32Decode(secret), Math.floor(time / 30_000));
}

/** Whether `code` is the TOTP code of the previous, the current or the next step. */
function totpAccepts(secret, code) {
  const key = base32Decode(secret);
  const step = Math.floor(Date.now() / 30_000);
  return [step - 1, step, step + 1].some((counter) => hotp(key, counter) === code);
}

const token = () => randomBytes(16).toString("hex");

// Every attribute is double-quoted, so apostrophes stay as they are ("didn't").
const escapeHtml = (text) => String(text).replace(/[&<>"]/g, (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[char]);

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;color:#1d1f23}
header{padding:16px 24px;font-weight:700;font-size:20px}
main{max-width:360px;margin:40px auto;background:#fff;padding:32px;border-radius:8px;box-shadow:0 1px 3px #0002}
h1{font-size:22px;margin:0 0 16px}
label{display:block;margin:12px 0 4px;font-weight:600}
input:not([type=hidden]){display:block;width:100%;box-sizing:border-box;padding:8px;font-size:16px}
button,.button{display:block;width:100%;margin-top:16px;padding:10px;font-size:16px;background:#2457d6;color:#fff;border:0;border-radius:4px;text-align:center;text-decoration:none}
form+form button{background:#fff;color:#2457d6;border:1px solid #2457d6}
.error{color:#b00020;background:#fdecee;padding:8px;border-radius:4px}`;

/** A whole page: the site's brand above `main`, an optional page script after it. */
function htmlPage(title, brand, main, script) {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} – ${escapeHtml(brand)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>${escapeHtml(brand)}</header>
<main>
${main}
</main>${script === undefined ? "" : `\n<script>${script}</script>`}
</body>
</html>
`;
}

const alert = (message) => (message === undefined ? "" : `<p role="alert" class="error">${escapeHtml(message)}</p>\n`);

const emailInput = (value = "") =>
  `<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required autofocus value="${escapeHtml(value)}">`;

const passwordInput = (autofocus) =>
  `<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${autofocus ? " autofocus" : ""}>`;

const hidden = (name, value) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;

/** The email + password form of the `password`, `totp`, `mfa`, `lookalike` and `workspace` sites and of the IdP. */
const passwordForm = (action, { email, error, extra = "" }) =>
  `<h1>Sign in</h1>
${alert(error)}<form method="post" action="${escapeHtml(action)}">
${extra}${emailInput(email)}
${passwordInput(false)}
<button type="submit">Sign in</button>
</form>`;

/** A 6-digit code form. */
const codeForm = (action, { heading, intro, label, challenge, error }) =>
  `<h1>${escapeHtml(heading)}</h1>
<p>${escapeHtml(intro)}</p>
${alert(error)}<form method="post" action="${escapeHtml(action)}">
${hidden("challenge", challenge)}
<label for="code">${escapeHtml(label)}</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required autofocus>
<button type="submit">Verify</button>
</form>`;

const TOTP_PAGE = {
  heading: "Two-factor authentication",
  intro: "Open your authenticator app and enter the 6-digit code for this account.",
  label: "Authentication code",
};
const SMS_PAGE = {
  heading: "Check your phone",
  intro: "We texted a 6-digit code to your phone number ending in 42.",
  label: "Verification code",
};
const CODE_ERROR = "That code didn't work.";
const PASSWORD_ERROR = "Incorrect email or password.";

const sameUser = (email) =>
  String(email ?? "")
    .trim()
    .toLowerCase() === USER.username;
const rightPassword = (email, password) => sameUser(email) && password === USER.password;

/** Starts the login sites on an ephemeral port of 127.0.0.1, also reachable as localhost. */
export async function startLoginSites() {
  let port = 0;
  /** session id → { site, host } */
  const sessions = new Map();
  /** two-step token → { host, email } */
  const steps = new Map();
  /** totp/mfa/workspace challenge → { site, host, method } after the right password */
  const challenges = new Map();
  /** SSO ticket → host to sign in on */
  const tickets = new Map();
  /** email-link attempt id → { host, token, state: "pending" | "approved" | "used" | "unknown-user" } */
  const attempts = new Map();
  /** site → [{ host, fields }] */
  const posts = new Map();
  /** Responses the `slow` site never answers, ended by close(). */
  const hanging = new Set();

  const url = (host, path) => `http://${host}:${port}${path}`;
  const otherHost = (host) => (host === "localhost" ? "127.0.0.1" : "localhost");
  const cookieName = (site) => `${site}_session`;

  function send(response, status, body, headers = {}) {
    response.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...headers }).end(body);
  }
  function redirect(response, location, headers = {}) {
    response.writeHead(302, { location, "cache-control": "no-store", ...headers }).end();
  }
  function signIn(site, host, workspace) {
    const id = token();
    sessions.set(id, { site, host, workspace });
    return `${cookieName(site)}=${id}; Path=/${site}/; HttpOnly; SameSite=Lax`;
  }
  /** The session `request` holds on `site` at `host`, if any. */
  function sessionOf(request, site, host) {
    for (const part of (request.headers.cookie ?? "").split(";")) {
      const [name, ...value] = part.trim().split("=");
      if (name !== cookieName(site)) continue;
      const session = sessions.get(value.join("="));
      if (session?.site === site && session.host === host) return session;
    }
    return undefined;
  }
  const signedIn = (request, site, host) => sessionOf(request, site, host) !== undefined;
  function succeed(response, site, host, workspace) {
    redirect(response, `/${site}/account`, { "set-cookie": signIn(site, host, workspace) });
  }

  async function readForm(request) {
    let size = 0;
    const chunks = [];
    for await (const chunk of request) {
      size += chunk.length;
      if (size > MAX_BODY) throw new Error("form too large");
      chunks.push(chunk);
    }
    return Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString("utf8")));
  }

  /** GET/POST /idp/login: Example ID, the `sso` site's identity provider, on the other host. */
  function identityProvider(request, response, host, query, form) {
    const returnPath = (form ?? Object.fromEntries(query))["return"] ?? "";
    let target;
    try {
      const base = new URL(url(otherHost(host), "/"));
      target = new URL(returnPath, base);
      if (!returnPath.startsWith("/") || returnPath.startsWith("//") || returnPath.includes("\\") || target.origin !== base.origin) target = undefined;
    } catch {
      target = undefined;
    }
    if (target === undefined) {
      send(response, 400, htmlPage("Sign in", "Example ID", `<h1>Something went wrong</h1>\n<p>The sign-in request is invalid.</p>`));
      return;
    }
    const render = (status, email, error) =>
      send(response, status, htmlPage("Sign in", "Example ID", passwordForm("/idp/login", { email, error, extra: `${hidden("return", returnPath)}\n` })));
    if (request.method === "GET") return render(200, "");
    if (!rightPassword(form.email, form.password)) return render(200, form.email ?? "", PASSWORD_ERROR);
    const ticket = token();
    tickets.set(ticket, otherHost(host));
    target.searchParams.set("ticket", ticket);
    redirect(response, target.href);
  }

  /** Everything under /<site>/ but its account page. */
  function site(request, response, host, name, rest, query, form) {
    const brand = BRANDS[name];
    const page = (status, title, main, script) => send(response, status, htmlPage(title, brand, main, script));
    const post = request.method === "POST";
    const get = request.method === "GET" || request.method === "HEAD";
    const notFound = () => page(404, "Not found", "<h1>Page not found</h1>");

    if (name === "slow") {
      if (rest !== "/login") return notFound();
      // Never answers: the socket stays open until the client gives up or close() ends it.
      hanging.add(response);
      response.on("close", () => hanging.delete(response));
      return;
    }
    if (rest === "/login" && get && signedIn(request, name, host)) return redirect(response, `/${name}/account`);

    switch (`${name} ${rest}`) {
      case "password /login":
      case "lookalike /login":
      case "totp /login":
      case "mfa /login":
      case "workspace /login": {
        const render = (email, error) => page(200, "Sign in", passwordForm(`/${name}/login`, { email, error }));
        if (get) return render("");
        if (!post) break;
        if (!rightPassword(form.email, form.password)) return render(form.email ?? "", PASSWORD_ERROR);
        if (name === "password" || name === "lookalike") return succeed(response, name, host);
        const challenge = token();
        challenges.set(challenge, { site: name, host, method: name === "totp" ? "totp" : undefined });
        return redirect(response, `/${name}/${name === "totp" ? "verify" : name === "workspace" ? "pick" : "choose"}?challenge=${challenge}`);
      }

      case "two-step /login": {
        if (get)
          return page(
            200,
            "Sign in",
            `<h1>Sign in</h1>\n<form method="post" action="/two-step/login">\n${emailInput("")}\n<button type="submit">Next</button>\n</form>`,
          );
        if (!post) break;
        // Any address goes on to the password step; a wrong one fails there, as on many real sites.
        const step = token();
        steps.set(step, { host, email: String(form.email ?? "").trim() });
        return redirect(response, `/two-step/password?step=${step}`);
      }
      case "two-step /password": {
        const step = (post ? form.step : query.get("step")) ?? "";
        const state = steps.get(step);
        if (state === undefined || state.host !== host) return redirect(response, "/two-step/login");
        const render = (error) =>
          page(
            200,
            "Enter your password",
            `<h1>Welcome</h1>\n<p>${escapeHtml(state.email)}</p>\n${alert(error)}<form method="post" action="/two-step/password">\n${hidden("step", step)}\n${passwordInput(true)}\n<button type="submit">Sign in</button>\n</form>`,
          );
        if (get) return render();
        if (!post) break;
        if (!rightPassword(state.email, form.password)) return render(PASSWORD_ERROR);
        steps.delete(step);
        return succeed(response, name, host);
      }

      case "mfa /choose": {
        const challenge = (post ? form.challenge : query.get("challenge")) ?? "";
        const state = challenges.get(challenge);
        if (state === undefined || state.site !== name || state.host !== host) return redirect(response, "/mfa/login");
        if (get) {
          const option = (method, label) =>
            `<form method="post" action="/mfa/choose">\n${hidden("challenge", challenge)}\n${hidden("method", method)}\n<button type="submit">${label}</button>\n</form>`;
          return page(
            200,
            "Verify it's you",
            `<h1>How do you want to verify it's you?</h1>\n${option("totp", "Use an authenticator app")}\n${option("sms", "Text me a code")}`,
          );
        }
        if (!post) break;
        if (form.method !== "totp" && form.method !== "sms") return redirect(response, `/mfa/choose?challenge=${challenge}`);
        state.method = form.method;
        return redirect(response, `/mfa/verify?challenge=${challenge}`);
      }
      case "workspace /pick": {
        const challenge = (post ? form.challenge : query.get("challenge")) ?? "";
        const state = challenges.get(challenge);
        if (state === undefined || state.site !== name || state.host !== host) return redirect(response, "/workspace/login");
        if (get) {
          const option = ([id, label]) =>
            `<form method="post" action="/workspace/pick">\n${hidden("challenge", challenge)}\n${hidden("workspace", id)}\n<button type="submit">${escapeHtml(label)}</button>\n</form>`;
          return page(
            200,
            "Choose a workspace",
            `<h1>Choose a workspace</h1>\n<p>${USER.username} belongs to two workspaces.</p>\n${Object.entries(WORKSPACES).map(option).join("\n")}`,
          );
        }
        if (!post) break;
        if (!Object.hasOwn(WORKSPACES, form.workspace ?? "")) return redirect(response, `/workspace/pick?challenge=${challenge}`);
        challenges.delete(challenge);
        return succeed(response, name, host, WORKSPACES[form.workspace]);
      }
      case "totp /verify":
      case "mfa /verify": {
        const challenge = (post ? form.challenge : query.get("challenge")) ?? "";
        const state = challenges.get(challenge);
        if (state === undefined || state.site !== name || state.host !== host) return redirect(response, `/${name}/login`);
        if (state.method === undefined) return redirect(response, `/mfa/choose?challenge=${challenge}`);
        const kind = state.method === "sms" ? SMS_PAGE : TOTP_PAGE;
        const render = (error) => page(200, kind.heading, codeForm(`/${name}/verify`, { ...kind, challenge, error }));
        if (get) return render();
        if (!post) break;
        const code = String(form.code ?? "").replace(/\s/g, "");
        const valid = state.method === "sms" ? code === SMS_CODE : /^\d{6}$/.test(code) && totpAccepts(USER.totpSecret, code);
        if (!valid) return render(CODE_ERROR);
        challenges.delete(challenge);
        return succeed(response, name, host);
      }

      case "sso /login": {
        if (!get) break;
        const idp = url(otherHost(host), `/idp/login?return=${encodeURIComponent("/sso/callback")}`);
        return page(
          200,
          "Sign in",
          `<h1>Sign in</h1>\n<p>Example Shop uses Example ID for sign-in.</p>\n<a class="button" href="${escapeHtml(idp)}">Sign in with Example ID</a>`,
        );
      }
      case "sso /callback": {
        if (!get) break;
        const ticket = query.get("ticket") ?? "";
        if (tickets.get(ticket) !== host) return redirect(response, "/sso/login");
        tickets.delete(ticket);
        return succeed(response, name, host);
      }

      case "email-link /login": {
        const render = (error) =>
          page(
            200,
            "Sign in",
            `<h1>Sign in</h1>\n<p>We'll email you a link for a password-free sign-in.</p>\n${alert(error)}<form method="post" action="/email-link/login">\n${emailInput("")}\n<button type="submit">Email me a sign-in link</button>\n</form>`,
          );
        if (get) return render();
        if (!post) break;
        const email = String(form.email ?? "").trim();
        if (!email.includes("@")) return render("Enter a valid email address.");
        // An unknown address gets the same page, but no mail ever comes.
        const attempt = token();
        attempts.set(attempt, { host, email, token: token(), state: sameUser(email) ? "pending" : "unknown-user" });
        return redirect(response, `/email-link/sent?attempt=${attempt}`);
      }
      case "email-link /sent": {
        if (!get) break;
        const attempt = query.get("attempt") ?? "";
        const state = attempts.get(attempt);
        if (state === undefined || state.host !== host) return redirect(response, "/email-link/login");
        const script = `
const attempt = ${JSON.stringify(attempt)};
async function poll() {
  try {
    const response = await fetch("/email-link/status?attempt=" + encodeURIComponent(attempt), { cache: "no-store" });
    const { status } = await response.json();
    if (status === "approved") return location.assign("/email-link/account");
    if (status !== "pending") {
      document.querySelector("main p").textContent = "This sign-in request has expired. Please start over.";
      return;
    }
  } catch {}
  setTimeout(poll, 500);
}
setTimeout(poll, 500);
`;
        return page(200, "Check your email", `<h1>Check your email</h1>\n<p>We sent a sign-in link to ${escapeHtml(state.email)}.</p>`, script);
      }
      case "email-link /status": {
        if (!get) break;
        const state = attempts.get(query.get("attempt") ?? "");
        const json = (status, body, headers = {}) =>
          response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers }).end(JSON.stringify(body));
        if (state === undefined || state.host !== host) return json(404, { status: "unknown" });
        if (state.state === "unknown-user") return json(200, { status: "pending" });
        if (state.state !== "approved") return json(200, { status: state.state });
        state.state = "used";
        return json(200, { status: "approved" }, { "set-cookie": signIn(name, host) });
      }
      case "email-link /approve": {
        if (!get) break;
        const tokenValue = query.get("token") ?? "";
        const state = [...attempts.values()].find((attempt) => attempt.token === tokenValue && attempt.state !== "unknown-user");
        if (state === undefined) return page(400, "Link expired", "<h1>Link expired</h1>\n<p>This sign-in link is invalid or has expired.</p>");
        if (state.state === "pending") state.state = "approved";
        return page(200, "Sign-in approved", "<h1>Sign-in approved</h1>\n<p>Sign-in approved. You can close this tab.</p>");
      }
      default:
        return notFound();
    }
    response.writeHead(405, { "content-type": "text/plain", allow: "GET, POST" }).end("method not allowed");
  }

  async function handle(request, response) {
    const hostHeader = request.headers.host ?? "";
    const host = hostHeader.replace(/:\d+$/, "");
    if (!HOSTS.has(host)) {
      response.writeHead(421, { "content-type": "text/plain" }).end("unknown host");
      return;
    }
    const { pathname, searchParams: query } = new URL(request.url ?? "/", url(host, "/"));
    let form;
    if (request.method === "POST") {
      try {
        form = await readForm(request);
      } catch {
        response.writeHead(413, { "content-type": "text/plain", connection: "close" }).end("form too large");
        return;
      }
    }
    if (pathname === "/idp/login") {
      if (form !== undefined) record("sso", host, form);
      identityProvider(request, response, host, query, form);
      return;
    }
    const match = /^\/([^/]+)(\/.*)?$/.exec(pathname);
    const name = match?.[1];
    if (name === undefined || !SITES.has(name)) {
      send(response, 404, htmlPage("Not found", "Login sites", "<h1>Page not found</h1>"));
      return;
    }
    if (form !== undefined) record(name, host, form);
    const rest = match[2];
    if (rest === undefined) return redirect(response, `/${name}/`);
    if (rest === "/") return redirect(response, `/${name}/account`);
    if (rest === "/account") {
      const session = sessionOf(request, name, host);
      if (session === undefined) return redirect(response, `/${name}/login`);
      const where = session.workspace === undefined ? "" : ` to ${escapeHtml(session.workspace)}`;
      send(response, 200, htmlPage("Account", BRANDS[name], `<h1>Account</h1><p>Signed in as ${USER.username}${where}</p>`));
      return;
    }
    site(request, response, host, name, rest, query, form);
  }

  function record(name, host, fields) {
    let list = posts.get(name);
    if (list === undefined) posts.set(name, (list = []));
    list.push({ host, fields });
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error) => {
      if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain" });
      response.end(String(error));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = server.address().port;

  return {
    port,
    user: USER,
    url,
    expireSessions() {
      sessions.clear();
    },
    pendingEmailLink() {
      const pending = [...attempts.values()].filter((attempt) => attempt.state === "pending").at(-1);
      return pending === undefined ? undefined : url(pending.host, `/email-link/approve?token=${pending.token}`);
    },
    submissions(name) {
      return (posts.get(name) ?? []).map(({ host, fields }) => ({ host, fields: { ...fields } }));
    },
    async close() {
      for (const response of hanging) response.socket?.destroy();
      hanging.clear();
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}
