// The live view page of browser-service: the browser's screen, its tabs and its WebMCP
// tools over one WebSocket to the service. Everything a page wrote (titles, URLs, tool
// names, descriptions, schemas, results) is shown with textContent, never as HTML.
// Served by the service (the token in the URL's fragment), and also rendered by MCP hosts
// as the MCP bridge's App (the live_view_url arrives in the tool result).

(() => {
  const PROTOCOL = "browser-service.live-view";
  const CLOSE_TEXT = {
    4401: "This browser is gone (deleted or crashed), or this link's token is wrong. Use the browser's live_view_url.",
    4404: "This browser is gone: it was deleted or it crashed.",
    1009: "The last message was too large for the service; reload to reconnect.",
  };
  const BUTTONS = ["left", "middle", "right"];
  const MAX_TEXT_CHARS = 65536;
  const TOOLS_POLL_MS = 3000;
  const MAX_RESULTS = 20;

  const $ = (id) => document.getElementById(id);
  const status = $("status");
  const tabStrip = $("tabs");
  const pageTitle = $("page-title");
  const pageUrl = $("page-url");
  const stage = $("stage");
  const screen = $("screen");
  const notice = $("notice");
  const toolList = $("tools");
  const resultList = $("results");

  let socket;
  let access = "watch";
  let selected = null;
  let frame = { width: 0, height: 0 };
  let arriving = frame;
  let nextInvocation = 1;
  let toolsTimer;
  let ended = false;
  let attempts = 0;
  const invocations = new Map();
  const drafts = new Map();

  function text(tag, content, className) {
    const node = document.createElement(tag);
    node.textContent = content;
    if (className) node.className = className;
    return node;
  }

  function showNotice(message) {
    notice.textContent = message;
    notice.hidden = false;
  }

  function setStatus(message, kind) {
    status.textContent = message;
    status.className = kind ?? "";
  }

  const liveStatus = () => (access === "control" ? "Live" : "Live · watch-only");

  function gone(message) {
    ended = true;
    clearInterval(toolsTimer);
    setStatus("Browser gone", "gone");
    showNotice(message);
    document.body.classList.add("watch");
  }

  function send(message) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  }

  /** Connects to the live view of `liveViewUrl` (`http(s)://host/browsers/{id}/live#token=...`). */
  function connect(liveViewUrl) {
    let target;
    try {
      target = new URL(liveViewUrl);
    } catch {
      gone("This is not a live view link.");
      return;
    }
    const token = new URLSearchParams(target.hash.slice(1)).get("token");
    if (!token) {
      gone("This browser is gone: its link carries no token (it was deleted or it crashed).");
      return;
    }
    const wsUrl = `${target.protocol === "https:" ? "wss:" : "ws:"}//${target.host}${target.pathname}`;
    setStatus("Connecting…");
    socket = new WebSocket(wsUrl, [PROTOCOL, `token.${token}`]);
    socket.onmessage = (event) => {
      if (typeof event.data === "string") receive(JSON.parse(event.data));
    };
    socket.onclose = (event) => {
      clearInterval(toolsTimer);
      if (ended) return;
      const known = CLOSE_TEXT[event.code];
      if (known) gone(known);
      else if (event.code === 4429 || event.code === 1008) {
        ended = true;
        setStatus("Disconnected", "gone");
        showNotice(event.reason || "The service closed this view.");
      } else if (attempts < 8) {
        // A dropped connection (a restart, a network blip): try again, waiting longer each time.
        attempts++;
        setStatus("Reconnecting…");
        setTimeout(() => connect(liveViewUrl), Math.min(500 * 2 ** attempts, 10000));
      } else {
        ended = true;
        setStatus("Disconnected", "gone");
        showNotice("The connection to the service was lost.");
      }
    };
  }

  function receive(message) {
    switch (message.type) {
      case "hello":
        attempts = 0;
        access = message.access;
        document.body.classList.toggle("watch", access !== "control");
        setStatus(liveStatus());
        send({ type: "tools" });
        clearInterval(toolsTimer);
        toolsTimer = setInterval(() => send({ type: "tools" }), TOOLS_POLL_MS);
        return;
      case "tabs":
        showTabs(message.tabs, message.selected);
        return;
      case "frame":
        if (message.tab !== selected) return;
        // The size a click is measured against is the shown image's, not the newest frame's
        // (an image loads a moment after its source is set, and frames differ in size).
        arriving = { width: message.width, height: message.height };
        screen.src = `data:image/jpeg;base64,${message.data}`;
        notice.hidden = true;
        return;
      case "tools":
        if (message.error) {
          toolList.replaceChildren(text("li", `${message.error.code}: ${message.error.message}`));
        } else if (!message.unchanged) showTools(message.snapshot);
        return;
      case "invocation":
        invocations.get(message.id)?.(message);
        invocations.delete(message.id);
        return;
      case "error":
        setStatus(`${liveStatus()} · ${message.message}`);
        return;
    }
  }

  function showTabs(tabs, current) {
    selected = current;
    tabStrip.replaceChildren(
      ...tabs.map((tab) => {
        const button = text("button", tab.title || tab.url || "New tab");
        button.type = "button";
        button.title = tab.url;
        button.setAttribute("aria-selected", String(tab.id === current));
        button.addEventListener("click", () => send({ type: "select", tab: tab.id }));
        return button;
      }),
    );
    const shown = tabs.find((tab) => tab.id === current);
    pageTitle.textContent = shown?.title ?? "";
    pageUrl.textContent = shown?.url ?? "";
    if (!shown) showNotice("No tab is open.");
  }

  function showTools(snapshot) {
    const tools = snapshot.tools ?? [];
    if (tools.length === 0) {
      toolList.replaceChildren(text("li", "No page has registered a WebMCP tool."));
      return;
    }
    toolList.replaceChildren(
      ...tools.map((tool) => {
        const item = document.createElement("li");
        item.append(text("div", tool.name, "tool-name"));
        const where = tool.source ? `${tool.source.page_title || "(untitled)"} · ${tool.source.page_url}${tool.source.frame ? " · in a frame" : ""}` : "";
        item.append(text("div", where, "tool-source"));
        item.append(text("div", tool.description, "tool-description"));
        item.append(text("pre", JSON.stringify(tool.input_schema, null, 2)));
        const input = document.createElement("textarea");
        // What the person typed survives the list being shown again (pages change it often).
        input.value = drafts.get(tool.tool_ref) ?? "{}";
        input.addEventListener("input", () => drafts.set(tool.tool_ref, input.value));
        input.setAttribute("aria-label", `Input of ${tool.name} (JSON)`);
        const invoke = text("button", "Invoke", "invoke");
        invoke.type = "button";
        invoke.addEventListener("click", () => {
          // Results are kept apart from the list: a tool that navigates its page leaves the list at once.
          const entry = document.createElement("li");
          const result = text("pre", "", "result");
          entry.append(text("div", tool.name, "tool-name"), result);
          resultList.prepend(entry);
          while (resultList.children.length > MAX_RESULTS) resultList.lastElementChild?.remove();
          let parsed;
          try {
            parsed = JSON.parse(input.value);
          } catch (error) {
            showResult(result, `The input is not JSON: ${error.message}`, "failed");
            return;
          }
          const id = nextInvocation++;
          showResult(result, "Running…", "");
          invocations.set(id, (answer) => showInvocation(result, answer));
          send({ type: "invoke", id, request: { tool_ref: tool.tool_ref, input: parsed } });
        });
        item.append(input, invoke);
        return item;
      }),
    );
  }

  function showResult(node, content, kind) {
    node.hidden = false;
    node.className = `result ${kind}`;
    node.textContent = content;
  }

  function showInvocation(node, answer) {
    if (answer.error) {
      if (answer.error.code === "outcome_unknown") {
        showResult(
          node,
          `Outcome unknown: the tool may have run and had its effects; do not simply run it again, look at the page.\n${answer.error.message}`,
          "unknown",
        );
      } else showResult(node, `Failed (${answer.error.status} ${answer.error.code}): ${answer.error.message}`, "failed");
      return;
    }
    const result = answer.result;
    if (result.status === "completed") showResult(node, `Completed:\n${JSON.stringify(result.output, null, 2)}`, "");
    else if (result.status === "error") showResult(node, `The tool failed: ${result.error_text ?? ""}`, "failed");
    else if (result.status === "awaiting_submission") showResult(node, "The form is filled but not submitted: submit it on the page.", "unknown");
    else showResult(node, `Canceled.`, "failed");
  }

  // Input: only while this view may control the browser. Coordinates are the page's CSS pixels.
  const controls = () => access === "control" && !ended;
  const modifiers = (event) => (event.altKey ? 1 : 0) | (event.ctrlKey ? 2 : 0) | (event.metaKey ? 4 : 0) | (event.shiftKey ? 8 : 0);
  function pagePoint(event) {
    const box = screen.getBoundingClientRect();
    const clamp = (value, max) => Math.min(Math.max(value, 0), max);
    return {
      x: clamp(((event.clientX - box.left) * frame.width) / (box.width || 1), frame.width),
      y: clamp(((event.clientY - box.top) * frame.height) / (box.height || 1), frame.height),
    };
  }
  const heldButton = (event) => (event.buttons & 1 ? "left" : event.buttons & 2 ? "right" : event.buttons & 4 ? "middle" : "none");

  screen.addEventListener("load", () => {
    frame = arriving;
  });
  for (const [name, kind] of [
    ["mousedown", "down"],
    ["mouseup", "up"],
  ]) {
    screen.addEventListener(name, (event) => {
      if (!controls()) return;
      event.preventDefault();
      // Keys go to the page once the screen has been clicked.
      if (kind === "down") stage.focus();
      const button = BUTTONS[event.button] ?? "left";
      send({ type: "mouse", event: kind, ...pagePoint(event), button, clicks: Math.min(event.detail || 1, 3), modifiers: modifiers(event) });
    });
  }
  let move;
  screen.addEventListener("mousemove", (event) => {
    if (!controls()) return;
    // One move per animation frame, the latest.
    if (move === undefined)
      requestAnimationFrame(() => {
        send(move);
        move = undefined;
      });
    move = { type: "mouse", event: "move", ...pagePoint(event), button: heldButton(event), modifiers: modifiers(event) };
  });
  screen.addEventListener(
    "wheel",
    (event) => {
      if (!controls()) return;
      event.preventDefault();
      const scale = event.deltaMode === 1 ? 40 : event.deltaMode === 2 ? 800 : 1;
      send({ type: "wheel", ...pagePoint(event), dx: event.deltaX * scale, dy: event.deltaY * scale, modifiers: modifiers(event) });
    },
    { passive: false },
  );
  screen.addEventListener("contextmenu", (event) => event.preventDefault());

  function keyText(event) {
    if (event.ctrlKey || event.metaKey) return undefined;
    if (event.key === "Enter") return "\r";
    return [...event.key].length === 1 ? event.key : undefined;
  }
  function key(kind, event) {
    if (!controls()) return;
    // Ctrl+V / Cmd+V: the paste event below sends the clipboard's text.
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "v") return;
    event.preventDefault();
    const message = {
      type: "key",
      event: kind,
      key: event.key.slice(0, 64),
      code: event.code.slice(0, 64),
      keyCode: event.keyCode & 255,
      modifiers: modifiers(event),
    };
    const typed = kind === "down" ? keyText(event) : undefined;
    if (typed !== undefined) message.text = typed;
    send(message);
  }
  stage.addEventListener("keydown", (event) => key("down", event));
  stage.addEventListener("keyup", (event) => key("up", event));
  stage.addEventListener("paste", (event) => {
    if (!controls()) return;
    event.preventDefault();
    const pasted = event.clipboardData?.getData("text/plain") ?? "";
    for (let at = 0; at < pasted.length; at += MAX_TEXT_CHARS) send({ type: "text", text: pasted.slice(at, at + MAX_TEXT_CHARS) });
  });
  $("tools-refresh").addEventListener("click", () => send({ type: "tools" }));

  // Served by the service: the page's own URL is the live view URL.
  if (/^https?:$/.test(location.protocol) && /\/browsers\/[^/]+\/live$/.test(location.pathname)) {
    connect(location.href);
    return;
  }
  startAsMcpApp();

  /**
   * Inside an MCP host (the bridge's show_browser App): the MCP Apps handshake over
   * postMessage (JSON-RPC 2.0, protocol 2026-01-26), then the live view link from the
   * tool result's structuredContent.live_view_url.
   */
  function startAsMcpApp() {
    setStatus("Waiting for the browser's live view link…");
    document.body.classList.add("app");
    if (window.parent === window) {
      gone("Open this page through the browser's live_view_url.");
      return;
    }
    const post = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
    let started = false;
    window.addEventListener("message", (event) => {
      const message = event.data;
      if (event.source !== window.parent || typeof message !== "object" || message === null || message.jsonrpc !== "2.0") return;
      if (message.id === 1 && ("result" in message || "error" in message)) {
        if (message.error) {
          setStatus("This client does not show MCP Apps.", "gone");
          return;
        }
        post({ method: "ui/notifications/initialized" });
        post({ method: "ui/notifications/size-changed", params: { width: document.documentElement.scrollWidth, height: 640 } });
        return;
      }
      switch (message.method) {
        case "ui/notifications/tool-result": {
          const url = message.params?.structuredContent?.live_view_url;
          if (typeof url === "string" && /^https?:\/\//.test(url) && !started) {
            started = true;
            connect(url);
          } else if (!started) gone("The tool did not return a live view link.");
          return;
        }
        case "ui/notifications/tool-cancelled":
          if (!started) gone("The call was cancelled.");
          return;
        case "ui/resource-teardown":
          ended = true;
          socket?.close(1000, "The host closed the view.");
          post({ id: message.id, result: {} });
          return;
        case "ping":
          post({ id: message.id, result: {} });
          return;
        default:
          if (message.method !== undefined && message.id !== undefined) post({ id: message.id, error: { code: -32601, message: "Method not found" } });
      }
    });
    post({
      id: 1,
      method: "ui/initialize",
      params: { protocolVersion: "2026-01-26", appInfo: { name: "browser-service-live-view", version: "1" }, appCapabilities: {} },
    });
  }
})();
