// The hosted login page: exchanges the single-use code in its URL's fragment for a token,
// then shows the login flow's fields, choices or external action and submits answers.
// Every text shown (labels, messages) comes from a website: set as text, never as HTML.
(() => {
  const $ = (id) => document.getElementById(id);
  const KEY = "browser-service.hosted-login";
  let token = sessionStorage.getItem(KEY);
  let shown = "";
  let busy = false;
  let timer;

  /** One poll at a time: the next read replaces any read already waiting. */
  function later(ms) {
    clearTimeout(timer);
    timer = setTimeout(() => refresh().catch(fail), ms);
  }

  function status(text) {
    $("status").textContent = text;
  }

  async function api(method, path, body) {
    const response = await fetch(`/auth/hosted${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw Object.assign(new Error(data.message || `HTTP ${response.status}`), { status: response.status });
    return data;
  }

  async function start() {
    const code = new URLSearchParams(location.hash.slice(1)).get("code");
    // The code is spent on first use; it leaves the address bar and history at once.
    history.replaceState(null, "", location.pathname);
    if (code) {
      const session = await api("POST", "/session", { code });
      token = session.token;
      sessionStorage.setItem(KEY, token);
    }
    if (!token) throw new Error("This page was opened without a login link.");
    await refresh();
  }

  async function refresh() {
    if (busy) return;
    const state = await api("GET", "/state");
    const key = JSON.stringify([state.flow_status, state.flow_step, state.interaction_id, state.external_action_message, state.website_error]);
    if (key !== shown) {
      shown = key;
      render(state);
    }
    if (state.flow_status === "IN_PROGRESS") later(1000);
  }

  function render(state) {
    $("domain").textContent = state.domain;
    $("site-error").hidden = !state.website_error;
    $("site-error").textContent = state.website_error ? `The website says: ${state.website_error}` : "";
    $("fields").hidden = true;
    $("choices").hidden = true;
    $("external").hidden = true;
    if (state.flow_status === "SUCCESS") return status("Signed in. You can close this page.");
    if (state.flow_status !== "IN_PROGRESS") return status(`This login ended: ${state.error_message || state.flow_status}.`);
    if (state.flow_step === "AWAITING_INPUT" && state.fields.length > 0) return renderFields(state);
    if (state.flow_step === "AWAITING_INPUT" && state.choices.length > 0) return renderChoices(state);
    if (state.flow_step === "AWAITING_EXTERNAL_ACTION") {
      status("Waiting for you to act outside this page.");
      $("external").hidden = false;
      $("external-message").textContent = state.external_action_message || "";
      if (state.live_view_url && $("live").src !== state.live_view_url) {
        $("live").src = state.live_view_url;
        $("live").hidden = false;
      }
      return;
    }
    status("Working…");
  }

  function renderFields(state) {
    status("The website asks for:");
    const form = $("fields");
    form.replaceChildren();
    for (const field of state.fields) {
      const label = document.createElement("label");
      label.textContent = field.label || field.ref;
      const input = document.createElement("input");
      input.name = field.id;
      input.required = field.required !== false;
      input.type = field.type === "password" ? "password" : "text";
      if (field.input_mode) input.inputMode = field.input_mode;
      input.autocomplete = field.type === "password" ? "current-password" : field.type === "identifier" ? "username" : "one-time-code";
      label.append(input);
      form.append(label);
    }
    const submit = document.createElement("button");
    submit.type = "submit";
    submit.textContent = "Continue";
    form.append(submit);
    form.onsubmit = (event) => {
      event.preventDefault();
      const values = Object.fromEntries(state.fields.map((field) => [field.id, form.elements.namedItem(field.id).value]));
      send({ interaction_id: state.interaction_id, field_values: values });
    };
    form.hidden = false;
  }

  function renderChoices(state) {
    status("Choose how to continue:");
    const box = $("choices");
    box.replaceChildren();
    for (const choice of state.choices) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = choice.label;
      button.onclick = () => send({ interaction_id: state.interaction_id, selected_choice_id: choice.id });
      box.append(button);
    }
    box.hidden = false;
  }

  function send(body) {
    busy = true;
    status("Sending…");
    $("fields").hidden = true;
    $("choices").hidden = true;
    api("POST", "/submit", body)
      .catch((error) => status(`Not sent: ${error.message}`))
      .finally(() => {
        busy = false;
        shown = "";
        later(500);
      });
  }

  function fail(error) {
    status(error.status === 401 ? error.message : `Something went wrong: ${error.message}`);
  }

  start().catch(fail);
})();
