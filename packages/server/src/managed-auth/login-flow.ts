import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { ManagedAuth, ManagedAuthChoice, ManagedAuthField } from "@browser-service/types";
import { type TotpSettings, totpCode } from "../credentials/totp.js";
import { hostOf, isWithin, mayTypeCredentials } from "./credential-hosts.js";
import type { LoginPageDriver } from "./login-page-driver.js";
import type { LoginInput, LoginPageChoice, LoginPageReading } from "./login-page-reading.js";

/** What a flow may type without asking: the connection's credential, opened. */
export interface StoredValues {
  identifier?: string | undefined;
  password?: string | undefined;
  totp?: TotpSettings | undefined;
  /** The credential's `sso_provider`: an SSO choice whose label names it is taken without asking. */
  ssoProvider?: string | undefined;
  /** The credential's domain: its values are typed only on it and its subdomains. */
  domain?: string | undefined;
  /** The label of the account a person picked in the last successful login: picked again without asking while the site offers it. */
  account?: string | undefined;
}

/** A person's answer to a pause: values by field id, or the id of a choice. */
export type FlowAnswer = { values: Readonly<Record<string, string>> } | { choice: string };

/** What a flow is waiting for: the fields or choices it showed under one interaction id. */
export interface FlowPause {
  interactionId: string;
  fields: ManagedAuthField[];
  choices: ManagedAuthChoice[];
}

/** How a flow ended (it is `SUCCESS` or `FAILED` here; expiry and cancelation end it from outside). */
export type FlowOutcome =
  | { status: "SUCCESS"; postLoginUrl: string; requirements: string[]; learned: LearnedValues }
  | { status: "FAILED"; code: string; message: string; websiteError?: string | undefined };

/** What a successful flow learned from a person: the values to save in the credential, and the account picked. */
export interface LearnedValues {
  identifier?: string;
  password?: string;
  account?: string;
}

/** What a flow tells of itself as it moves: the record fields of its current step. */
export type FlowReport = (patch: Partial<ManagedAuth>) => Promise<void>;

/** The flow was ended from outside (expired, canceled, superseded): it stops at its next step. */
export class FlowStoppedError extends Error {
  readonly code = "flow_stopped";
}

const MAX_STEPS = 24;
const EXTERNAL_ACTION =
  /check your (email|inbox|phone|device)|we sent (you )?(a|an) (sign-in |login |magic )?(link|email|notification|push)|approve (the|this) sign-in|tap (yes|approve)/i;
const SIGN_IN_LINK = /^(sign in|log in|login|sign on)$/i;
const MFA_KINDS: readonly [RegExp, NonNullable<ManagedAuthChoice["mfa_type"]>][] = [
  [/authenticat|totp|code generator/i, "totp"],
  [/text|sms/i, "sms"],
  [/call/i, "call"],
  [/e-?mail/i, "email"],
  [/push|notification|prompt/i, "push"],
];
const SSO_LABEL = /^(sign in|log in|login|continue|sign on) with (.+)$/i;
/** A picker's button that does something rather than name an account: never offered, so never remembered and clicked again. */
const NOT_AN_ACCOUNT =
  /\b(sign|log)\s*(out|off)\b|\b(delete|remove|deactivate|cancel)\b|\b(create|add|new|switch)\b.*\b(account|workspace|organi[sz]ation|team|profile|tenant)s?\b|\b(use|choose|pick) (another|a different)\b|^(back|help|settings|forgot\b.*)$/i;
/** A page heading that asks which account (workspace, organization…) to go on with. */
const ACCOUNT_PICKER =
  /\b(choose|select|pick|switch)\b.*\b(account|workspace|organi[sz]ation|team|tenant|company|profile)s?\b|\bwhich (account|workspace|organi[sz]ation|team|tenant|profile)\b/i;

/** A new opaque id for a pause. */
export const newInteractionId = () => `int_${randomBytes(9).toString("base64url")}`;

/**
 * One login flow's robot: it reads each page of the site and does what a person would
 * (types what it knows, asks for what it does not, picks the authenticator when it holds
 * its secret, waits while an email link or a push is approved), until it lands signed in
 * on the connection's domain or cannot go on. Values are typed only on hosts the
 * connection allows ({@link mayTypeCredentials}); a value the site rejects is asked for
 * again when a person gave it, and ends the flow when it was stored (retrying a stored
 * password can lock an account).
 */
export class LoginFlow {
  readonly #page: LoginPageDriver;
  readonly #connection: ManagedAuth;
  readonly #stored: StoredValues;
  readonly #report: FlowReport;
  readonly #ask: (pause: FlowPause, websiteError: string | null) => Promise<FlowAnswer>;
  readonly #stopped: () => boolean;
  readonly #requirements = new Set<string>();
  readonly #learned: LearnedValues = {};

  constructor(options: {
    page: LoginPageDriver;
    connection: ManagedAuth;
    stored: StoredValues;
    report: FlowReport;
    ask: (pause: FlowPause, websiteError: string | null) => Promise<FlowAnswer>;
    stopped: () => boolean;
  }) {
    this.#page = options.page;
    this.#connection = options.connection;
    this.#stored = options.stored;
    this.#report = options.report;
    this.#ask = options.ask;
    this.#stopped = options.stopped;
  }

  /** Runs the flow from the login page to its end; `timeoutMs` bounds the first page load. */
  async run(timeoutMs: number): Promise<FlowOutcome> {
    const connection = this.#connection;
    const start = connection.login_url ?? `https://${connection.domain}/`;
    await this.#page.navigate(start, timeoutMs);
    let submitted = false;
    let followedSignIn = false;
    let usedStored = false;
    let rejected = false;
    for (let step = 0; step < MAX_STEPS; step++) {
      this.#alive();
      const reading = await this.#page.read();
      const loginInputs = reading.inputs.filter((input) => input.kind !== "text");
      if (submitted && reading.alert !== null && loginInputs.length > 0) {
        if (usedStored) {
          return {
            status: "FAILED",
            code: "login_rejected",
            message: "The site rejected the stored credential; it was not tried again.",
            websiteError: reading.alert,
          };
        }
        rejected = true;
      }
      if (loginInputs.length > 0) {
        if (!this.#mayType(reading.url)) return this.#notAllowed(reading.url);
        const plan = loginInputs.map((input) => ({ input, field: fieldOf(input, reading, rejected), value: this.#storedValue(input, reading) }));
        const missing = plan.filter((entry) => entry.value === undefined);
        if (missing.length > 0) {
          const answer = await this.#pause({ fields: missing.map((entry) => entry.field), choices: [] }, rejected ? reading.alert : null);
          if (!("values" in answer)) throw new Error("A pause for fields was answered with a choice.");
          for (const entry of missing) entry.value = answer.values[entry.field.id];
        }
        usedStored = plan.some((entry) => !missing.includes(entry));
        await this.#report({ flow_step: "SUBMITTING", fields: [], choices: [], discovered_fields: [], website_error: null });
        let typedAll = false;
        for (const entry of plan) {
          const value = entry.value ?? "";
          this.#requirements.add(entry.field.type);
          if (missing.includes(entry) && entry.field.type === "identifier") this.#learned.identifier = value;
          if (missing.includes(entry) && entry.field.type === "password") this.#learned.password = value;
          // A stored value also stays on its credential's own domain, whatever the connection allows.
          const stored = !missing.includes(entry);
          const mayGo = (url: string) => this.#mayType(url) && (!stored || isWithin(hostOf(url), this.#stored.domain ?? ""));
          const typed = await this.#page.type(entry.input.selector, value, mayGo);
          if (typed === "missing") break;
          if (typed === "refused") {
            const url = await this.#page.url();
            return stored && this.#mayType(url) ? this.#notForCredential(url) : this.#notAllowed(url);
          }
          typedAll = entry === plan[plan.length - 1];
        }
        // The form changed under the robot (an input it read is gone): it reads the page again.
        if (!typedAll) {
          await this.#page.settle();
          continue;
        }
        const last = plan[plan.length - 1]?.input.selector ?? "";
        if (reading.submit === null || !(await this.#page.click(reading.submit))) await this.#page.submitFormOf(last);
        submitted = true;
        rejected = false;
        await this.#page.settle();
        continue;
      }
      if (EXTERNAL_ACTION.test(reading.text)) {
        this.#requirements.add("external_action");
        await this.#report({
          flow_step: "AWAITING_EXTERNAL_ACTION",
          external_action_message: [reading.heading, reading.text.replace(reading.heading, "").trim()].filter(Boolean).join(": ").slice(0, 500),
        });
        await this.#waitForNavigation(reading.url);
        await this.#report({ flow_step: "SUBMITTING", external_action_message: null });
        submitted = true;
        continue;
      }
      const choices = choicesOf(reading.choices);
      if (choices.length === 0 && ACCOUNT_PICKER.test(reading.heading)) choices.push(...accountsOf(reading.choices));
      if (choices.length > 0) {
        // A page elsewhere could learn the remembered account from what is picked, or have a person choose among its words.
        if (!this.#mayType(reading.url)) return this.#notAllowed(reading.url, "chosen");
        const chosen = this.#autoChoice(choices) ?? (await this.#choose(choices));
        if (chosen.observed_selector == null || !(await this.#page.click(chosen.observed_selector))) {
          return { status: "FAILED", code: "choice_unavailable", message: `The choice "${chosen.label}" is no longer on the page.` };
        }
        await this.#report({
          flow_step: "SUBMITTING",
          choices: [],
          sso_provider: chosen.type === "sso_provider" ? (SSO_LABEL.exec(chosen.label)?.[2] ?? null) : null,
        });
        submitted = true;
        await this.#page.settle();
        continue;
      }
      const onDomain = isWithin(hostOf(reading.url), connection.domain);
      if (onDomain && (submitted || connection.login_url !== undefined)) {
        return { status: "SUCCESS", postLoginUrl: reading.url, requirements: [...this.#requirements], learned: this.#learned };
      }
      const signIn = followedSignIn ? undefined : reading.choices.find((choice) => SIGN_IN_LINK.test(choice.label));
      if (signIn !== undefined && (await this.#page.click(signIn.selector))) {
        followedSignIn = true;
        await this.#page.settle();
        continue;
      }
      return { status: "FAILED", code: "login_page_not_found", message: `No login form was found at ${reading.url}.` };
    }
    return { status: "FAILED", code: "login_stuck", message: `The login did not finish within ${MAX_STEPS} pages.` };
  }

  #alive(): void {
    if (this.#stopped()) throw new FlowStoppedError("The flow was ended.");
  }

  #mayType(url: string): boolean {
    return mayTypeCredentials(url, this.#connection.domain, this.#connection.allowed_domains ?? []);
  }

  #notAllowed(url: string, what: "typed" | "chosen" = "typed"): FlowOutcome {
    const page = what === "typed" ? "login form" : "sign-in choice";
    return {
      status: "FAILED",
      code: "domain_not_allowed",
      message: `The ${page} at ${hostOf(url) ?? url} is not on ${this.#connection.domain}, its allowed domains or a known identity provider (or not over https); nothing was ${what} there.`,
    };
  }

  #notForCredential(url: string): FlowOutcome {
    return {
      status: "FAILED",
      code: "domain_not_allowed",
      message: `The login form at ${hostOf(url) ?? url} is not on ${this.#stored.domain}, the domain of the connection's credential; its values are typed nowhere else.`,
    };
  }

  #storedValue(input: LoginInput, reading: LoginPageReading): string | undefined {
    if (input.kind === "identifier") return this.#stored.identifier;
    if (input.kind === "password") return this.#stored.password;
    if (input.kind === "code" && this.#stored.totp !== undefined && codeType(input, reading) === "totp_code") return totpCode(this.#stored.totp).code;
    return undefined;
  }

  #autoChoice(choices: ManagedAuthChoice[]): ManagedAuthChoice | undefined {
    if (this.#stored.totp !== undefined) {
      const app = choices.find((choice) => choice.mfa_type === "totp");
      if (app !== undefined) return app;
    }
    const account = this.#stored.account;
    if (account !== undefined) {
      const same = choices.find((choice) => choice.type === "account" && choice.label === account);
      if (same !== undefined) {
        this.#requirements.add("account");
        this.#learned.account = account;
        return same;
      }
    }
    const provider = this.#stored.ssoProvider?.toLowerCase();
    if (provider !== undefined) return choices.find((choice) => choice.type === "sso_provider" && choice.label.toLowerCase().includes(provider));
    return undefined;
  }

  async #choose(choices: ManagedAuthChoice[]): Promise<ManagedAuthChoice> {
    if (choices.some((choice) => choice.type !== "account")) this.#requirements.add("choice");
    const answer = await this.#pause({ fields: [], choices }, null);
    const chosen = "choice" in answer ? choices.find((choice) => choice.id === answer.choice) : undefined;
    if (chosen === undefined) throw new Error("A pause for a choice was answered without one of its choices.");
    // An account is remembered and picked again; any other choice a person made is asked again.
    if (chosen.type === "account") {
      this.#requirements.add("account");
      this.#learned.account = chosen.label;
    }
    if (chosen.mfa_type === "sms") this.#requirements.add("sms_code");
    if (chosen.mfa_type === "email") this.#requirements.add("email_code");
    return chosen;
  }

  async #pause(shown: Omit<FlowPause, "interactionId">, websiteError: string | null): Promise<FlowAnswer> {
    const answer = await this.#ask({ interactionId: newInteractionId(), ...shown }, websiteError);
    this.#alive();
    return answer;
  }

  async #waitForNavigation(from: string): Promise<void> {
    for (;;) {
      this.#alive();
      await sleep(500);
      const now = await this.#page.url().catch(() => from);
      if (now !== from) {
        await this.#page.settle();
        return;
      }
    }
  }
}

/** Whether a code input asks for an authenticator app's code or one sent to the user. */
function codeType(input: LoginInput, reading: LoginPageReading): "totp_code" | "code" {
  const words = `${input.label} ${reading.heading} ${reading.text}`;
  if (/sms|text message|we (sent|texted)|sent to|phone ending|e-?mail/i.test(words)) return "code";
  return "totp_code";
}

/** The canonical field a person is asked for in place of `input`. */
function fieldOf(input: LoginInput, reading: LoginPageReading, rejected: boolean): ManagedAuthField {
  const type: ManagedAuthField["type"] = input.kind === "code" ? codeType(input, reading) : input.kind === "text" ? "text" : input.kind;
  const ref = type === "identifier" ? "username" : type === "password" ? "password" : type === "totp_code" ? "totp_code" : "code";
  const mode =
    input.inputMode === "numeric" || type === "code" || type === "totp_code"
      ? "numeric"
      : input.type === "email"
        ? "email"
        : input.type === "tel"
          ? "tel"
          : "text";
  return {
    id: `fld_${ref}`,
    ref,
    type,
    reason: rejected && (type === "identifier" || type === "password") ? "rejected" : "missing",
    label: input.label || ref,
    input_mode: mode,
    observed_selector: input.selector,
    required: true,
  };
}

/** The buttons of an account picker page as `account` choices: not a plain "Sign in" link, nor one that acts on the session or the account. */
function accountsOf(buttons: readonly LoginPageChoice[]): ManagedAuthChoice[] {
  return buttons
    .filter((button) => !SIGN_IN_LINK.test(button.label) && !NOT_AN_ACCOUNT.test(button.label))
    .map((button, index) => ({ id: `chc_${index + 1}`, type: "account" as const, label: button.label, observed_selector: button.selector }));
}

/** The buttons of a page that are sign-in choices (a method of verification, an identity provider), as canonical choices. */
function choicesOf(buttons: readonly LoginPageChoice[]): ManagedAuthChoice[] {
  const choices: ManagedAuthChoice[] = [];
  for (const button of buttons) {
    const sso = SSO_LABEL.exec(button.label);
    const mfa = sso === null ? MFA_KINDS.find(([pattern]) => pattern.test(button.label)) : undefined;
    if (sso === null && mfa === undefined) continue;
    choices.push({
      id: `chc_${choices.length + 1}`,
      type: sso !== null ? "sso_provider" : "mfa_method",
      label: button.label,
      observed_selector: button.selector,
      ...(mfa === undefined ? {} : { mfa_type: mfa[1] }),
    });
  }
  return choices;
}
