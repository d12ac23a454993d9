/**
 * What a login robot sees of a page: the login inputs, the buttons a person could
 * choose between, the submit button, the site's error text, and the words on the page.
 * Read by {@link READ_LOGIN_PAGE} in an isolated world of the page's main frame, so the
 * page's own scripts cannot change what the reading code calls.
 */
export interface LoginPageReading {
  url: string;
  heading: string;
  /** The page's visible text, whitespace folded, at most 600 characters. */
  text: string;
  inputs: LoginInput[];
  choices: LoginPageChoice[];
  /** The submit button of the form of the first login input; `null` when it has none. */
  submit: string | null;
  /** Text the site shows as an error (`role="alert"` and the like), or `null`. */
  alert: string | null;
}

/** One visible input of a page. */
export interface LoginInput {
  kind: "identifier" | "password" | "code" | "text";
  selector: string;
  label: string;
  /** The input's `inputmode`, `type` and `autocomplete`, lower case, for telling a user what is asked. */
  inputMode: string;
  type: string;
  autocomplete: string;
}

/** A visible button or sign-in link. */
export interface LoginPageChoice {
  label: string;
  selector: string;
}

/** The most inputs and choices one reading holds, and the longest selector kept: a page with thousands of buttons, or a DOM thousands deep, costs no more. */
export const READING_BOUNDS = { inputs: 20, choices: 20, selectorChars: 1000 } as const;

/** The expression that reads a page into a {@link LoginPageReading}. */
export const READ_LOGIN_PAGE = `(() => {
  const BOUNDS = ${JSON.stringify(READING_BOUNDS)};
  const fold = (text, max) => String(text || "").replace(/\\s+/g, " ").trim().slice(0, max);
  const visible = (el) => {
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    return box.width > 0 && box.height > 0 && style.visibility !== "hidden" && style.display !== "none" && Number(style.opacity) !== 0;
  };
  const unique = (selector) => document.querySelectorAll(selector).length === 1;
  const selectorOf = (el) => {
    if (el.id && unique("#" + CSS.escape(el.id))) return "#" + CSS.escape(el.id);
    const name = el.getAttribute("name");
    if (name) {
      const byName = el.tagName.toLowerCase() + '[name="' + CSS.escape(name) + '"]';
      if (unique(byName)) return byName;
    }
    const parts = [];
    for (let node = el; node && node !== document.documentElement; node = node.parentElement) {
      let index = 1;
      for (let sibling = node.previousElementSibling; sibling; sibling = sibling.previousElementSibling) if (sibling.tagName === node.tagName) index++;
      parts.unshift(node.tagName.toLowerCase() + ":nth-of-type(" + index + ")");
    }
    return "html > " + parts.join(" > ");
  };
  const labelOf = (el) => {
    const byFor = el.id ? document.querySelector('label[for="' + CSS.escape(el.id) + '"]') : null;
    const wrapping = el.closest("label");
    return fold((byFor && byFor.textContent) || (wrapping && wrapping.textContent) || el.getAttribute("aria-label") || el.getAttribute("placeholder") || el.getAttribute("name") || "", 200);
  };
  const SKIP = ["hidden", "submit", "button", "checkbox", "radio", "image", "reset", "file", "range", "color"];
  const inputs = [];
  let firstLogin = null;
  for (const el of document.querySelectorAll("input, textarea")) {
    const type = (el.getAttribute("type") || "text").toLowerCase();
    if (SKIP.includes(type) || el.disabled || el.readOnly || !visible(el)) continue;
    const autocomplete = (el.getAttribute("autocomplete") || "").toLowerCase();
    const hints = [el.getAttribute("name"), el.id, labelOf(el), el.getAttribute("placeholder")].join(" ").toLowerCase();
    let kind = "text";
    if (type === "password") kind = "password";
    else if (autocomplete.includes("one-time-code") || /(^|[^a-z])(code|otp|2fa|mfa|totp|verification|passcode)([^a-z]|$)/.test(hints)) kind = "code";
    else if (type === "email" || type === "tel" || /username|email/.test(autocomplete) || /user|e-?mail|login|identifier|phone|account/.test(hints)) kind = "identifier";
    const selector = selectorOf(el);
    if (selector.length > BOUNDS.selectorChars) continue;
    if (kind !== "text" && firstLogin === null) firstLogin = el;
    inputs.push({ kind, selector, label: labelOf(el), inputMode: fold(el.getAttribute("inputmode"), 40).toLowerCase(), type: fold(type, 40), autocomplete: fold(autocomplete, 200) });
    if (inputs.length >= BOUNDS.inputs) break;
  }
  let submit = null;
  const form = firstLogin && firstLogin.form;
  if (form) {
    const button = [...form.querySelectorAll('button:not([type]), button[type="submit"], input[type="submit"]')].find((el) => visible(el) && !el.disabled);
    if (button) submit = selectorOf(button);
  }
  const choices = [];
  for (const el of document.querySelectorAll('button, input[type="submit"], input[type="button"], a[href], [role="button"]')) {
    if (el.disabled || !visible(el) || (firstLogin && firstLogin.form && el.form === firstLogin.form)) continue;
    const label = fold(el.tagName === "INPUT" ? el.value : el.textContent || el.getAttribute("aria-label"), 200);
    if (!label) continue;
    if (el.tagName === "A" && el.getAttribute("role") !== "button" && !/^(sign in|log in|login|continue|sign on) with /i.test(label)) continue;
    const selector = selectorOf(el);
    if (selector.length > BOUNDS.selectorChars) continue;
    choices.push({ label, selector });
    if (choices.length >= BOUNDS.choices) break;
  }
  const alertEl = [...document.querySelectorAll('[role="alert"], .error, .alert-danger, [aria-live="assertive"]')].find((el) => visible(el) && fold(el.textContent, 1));
  const heading = document.querySelector("h1, h2");
  return {
    url: location.href,
    heading: fold(heading && heading.textContent, 200),
    text: fold(document.body ? document.body.innerText : "", 600),
    inputs,
    choices,
    submit,
    alert: alertEl ? fold(alertEl.textContent, 500) : null,
  };
})()`;
