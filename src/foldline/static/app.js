// The panel: the agents of each workspace, and an agent's transcript at /agents/{agent}.

import { addressTarget, hitAddress, hitTarget } from "./address.js";
import { ApiError, conversationPath, getJson, page } from "./api.js";
import { copyText, download, toJson, toMarkdown, wholeTranscript } from "./export.js";
import { plainText } from "./markdown.js";
import { el } from "./parts.js";
import { Shortcuts } from "./keys.js";
import { FindBar, SearchBox } from "./search.js";
import { PAGE, Transcript, agentInfo, scrollToBottom } from "./transcript.js";

const main = document.getElementById("main");
const crumb = document.getElementById("crumb");
let current = null; // the transcript on screen
let currentView = null; // {agent, transcript, status}
let showing = null; // the token of the place being shown: a newer one makes it stale

function relative(stamp) {
  const then = Date.parse(stamp);
  if (Number.isNaN(then)) return "";
  const s = Math.max(0, (Date.now() - then) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  if (s < 86400) return Math.floor(s / 3600) + " h ago";
  if (s < 86400 * 30) return Math.floor(s / 86400) + " d ago";
  return new Date(then).toISOString().slice(0, 10);
}

// An agent's title as plain text: imported titles are often a prompt's first line, in Markdown.
function titleText(title) {
  return (title && plainText(title)) || "Untitled agent";
}

function navLink(href, text, className) {
  const a = el("a", className, text);
  a.href = href;
  a.dataset.nav = "";
  return a;
}

async function agentsView() {
  crumb.replaceChildren();
  document.title = "Foldline";
  const me = await getJson("/api/me");
  document.getElementById("who").textContent = me.name || "";
  const view = el("div", "agents");
  if (!me.workspaces.length) view.append(el("p", "muted", "You are not in any workspace yet."));
  const lists = await Promise.all(
    me.workspaces.map((w) => getJson("/api/agents?workspace_id=" + encodeURIComponent(w.id))),
  );
  const names = new Map();
  for (const w of me.workspaces) names.set(w.name, (names.get(w.name) || 0) + 1);
  me.workspaces.forEach((workspace, i) => {
    const section = el("section", "workspace");
    section.dataset.workspace = workspace.id;
    const heading = el("h2", "", workspace.name);
    // Two workspaces of the same name: a short id tells them apart.
    if (names.get(workspace.name) > 1) heading.append(el("span", "ws-id", " · " + String(workspace.id).slice(0, 8)));
    section.append(heading);
    const agents = lists[i].agents;
    if (!agents.length) section.append(el("p", "muted", "No agents yet."));
    const ul = el("ul", "agent-list");
    for (const agent of agents) {
      const li = el("li");
      li.dataset.agent = agent.id;
      li.append(navLink("/agents/" + encodeURIComponent(agent.id), titleText(agent.title), "agent-title"));
      const when = el("time", "muted", relative(agent.updated_at));
      when.dateTime = agent.updated_at;
      when.title = agent.updated_at;
      li.append(when);
      ul.append(li);
    }
    section.append(ul);
    view.append(section);
  });
  main.replaceChildren(view);
}

function button(text, onClick, className = "") {
  const b = el("button", className, text);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

function fileName(info, ext) {
  const base = (info.title || "transcript").replace(/[^\w.-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60) || "transcript";
  return `${base}.${ext}`;
}

function toolbar(info, status) {
  const bar = el("div", "toolbar");
  const note = (text) => {
    status.textContent = text;
  };
  const run = async (label, work) => {
    note(label + "…");
    try {
      await work();
      note(label + ": done");
    } catch (error) {
      note(label + " failed: " + error.message);
    }
  };
  bar.append(
    button("Copy transcript", () => run("Copy transcript", () => copyText(wholeTranscript(info.id).then(toMarkdown))), "copy-transcript"),
    button("Download Markdown", () => run("Download Markdown", async () => download(fileName(info, "md"), toMarkdown(await wholeTranscript(info.id)), "text/markdown")), "download-md"),
    button("Download JSON", () => run("Download JSON", async () => download(fileName(info, "json"), toJson(await wholeTranscript(info.id)), "application/json")), "download-json"),
    status,
  );
  return bar;
}

// Show a place in the transcript on screen: `focus` moves the keyboard there (a hit opened from
// the search box), a find step keeps it in the find field.
async function show(target, { focus = false } = {}) {
  const view = currentView;
  if (!view) return;
  if (showing) showing.live = false;
  const token = { live: true };
  showing = token;
  view.note.textContent = "";
  try {
    await view.ready; // a hit opened while the newest page is still being read
    const shown = await view.transcript.reveal(target, { token });
    if (focus && shown && token.live) {
      if (shown.tabIndex < 0 && !shown.hasAttribute("tabindex")) shown.tabIndex = -1;
      shown.focus({ preventScroll: true });
    }
  } catch (error) {
    if (token.live) view.note.textContent = "Cannot show that match: " + error.message;
    throw error;
  }
}

async function transcriptView(agent, target) {
  // The agent and its newest page are read at once (the shell preloads both): no waterfall.
  const first = page(conversationPath(agent), { limit: PAGE });
  first.catch(() => {}); // an agent not found answers through its own read below
  let info;
  try {
    info = await agentInfo(agent);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      main.replaceChildren(el("p", "notice", "This agent was not found, or you are not in its workspace."));
      return;
    }
    throw error;
  }
  document.title = titleText(info.title) + " · Foldline";
  crumb.replaceChildren(el("span", "sep", "/"), el("span", "", titleText(info.title)));
  const view = el("div", "agent");
  const status = el("span", "muted status");
  status.setAttribute("role", "status");
  view.append(toolbar(info, status));
  const body = el("div", "transcript");
  const note = el("p", "notice show-note");
  note.setAttribute("role", "status");
  const find = new FindBar({
    agent,
    show: (hit) => {
      history.replaceState(null, "", hitAddress(hit));
      return show(hitTarget(hit));
    },
    clear: () => transcript.clearMarks(),
  });
  view.append(find.node, note, body);
  main.replaceChildren(view);
  const subagents = new Set(info.subagents || []);
  let refresh = null;
  const transcript = new Transcript(body, {
    agent,
    subagents,
    onLive: (message) => {
      const calls = (message.parts || []).map((p) => p && p.toolCallId).filter((c) => typeof c === "string" && !subagents.has(c));
      if (!calls.length || refresh) return;
      refresh = setTimeout(async () => {
        refresh = null;
        const fresh = await agentInfo(agent).catch(() => null);
        if (!fresh) return;
        const before = subagents.size;
        for (const call of fresh.subagents || []) subagents.add(call);
        if (subagents.size !== before) transcript.redrawAll();
      }, 500);
    },
  });
  current = transcript;
  // The first view: the newest page, its closed folds' bodies built once it is on screen.
  const drawn = transcript.start(first, { later: true });
  const ready = drawn.then(afterPaint).then(() => transcript.buildWaiting());
  ready.catch(() => {}); // a failed read is told through `drawn`
  currentView = { agent, transcript, note, ready };
  await drawn;
  scrollToBottom();
  performance.mark("foldline:newest-page"); // read by bench/panel_load.py
  await ready;
  if (target) await show(target, { focus: true }).catch(() => {});
  transcript.observeTop();
}

// Resolves once what is drawn now has been painted (the next frame, then the task after it); a
// tab in the background draws no frame, so it does not wait for one past a quarter second.
function afterPaint() {
  return new Promise((resolve) => {
    requestAnimationFrame(() => setTimeout(resolve, 0));
    setTimeout(resolve, 250);
  });
}

function agentOf(path) {
  const match = /^\/agents\/([^/]+)\/?$/.exec(path);
  return match ? decodeURIComponent(match[1]) : null;
}

// Draw what the address says. On the same agent, only the place in it changes.
async function route(target = addressTarget()) {
  const agent = agentOf(location.pathname);
  if (agent !== null && currentView && currentView.agent === agent && current && !current.stopped) {
    if (target) await show(target, { focus: true }).catch(() => {});
    return;
  }
  if (current) current.stop();
  current = null;
  currentView = null;
  try {
    if (agent !== null) await transcriptView(agent, target);
    else await agentsView();
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return;
    main.replaceChildren(el("p", "notice error", "Something went wrong: " + error.message));
  }
  document.body.dataset.ready = "1";
}

// A hit opened from the search box: its address, then the place.
function openHit(hit) {
  const href = hitAddress(hit);
  if (location.pathname + location.search + location.hash !== href) history.pushState(null, "", href);
  route(hitTarget(hit));
}

const searchBox = new SearchBox({ onOpen: openHit });
const searchButton = el("button", "search-open", "Search");
searchButton.type = "button";
searchButton.title = "Search every transcript (/ or Ctrl+K)";
searchButton.setAttribute("aria-keyshortcuts", "/ Control+K Meta+K");
searchButton.setAttribute("aria-haspopup", "dialog");
searchButton.append(el("kbd", "", "/"));
searchButton.addEventListener("click", () => searchBox.open());
document.getElementById("crumb").after(searchButton);

// Typing somewhere: `/` is a character there, not the shortcut.
function typing(target) {
  if (!(target instanceof Element)) return false;
  return target.closest("input, textarea, select, [contenteditable]:not([contenteditable=false])") !== null;
}

document.addEventListener("keydown", (event) => {
  if (event.defaultPrevented) return;
  const k = event.key === "k" || event.key === "K";
  if (k && (event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey) {
    event.preventDefault();
    searchBox.open();
  } else if (event.key === "/" && !event.ctrlKey && !event.metaKey && !event.altKey && !typing(event.target) && !searchBox.isOpen) {
    event.preventDefault();
    searchBox.open();
  }
});

// j/k, [/], g/G, o/Enter and ? (keys.js), after the search keys above.
const shortcuts = new Shortcuts({ searchOpen: () => searchBox.isOpen });
document.addEventListener("keydown", (event) => {
  if (shortcuts.handle(event)) event.preventDefault();
});

document.addEventListener("click", (event) => {
  const a = event.target.closest("a[data-nav], a.brand");
  if (!a || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  if (a.getAttribute("href") !== location.pathname) history.pushState(null, "", a.getAttribute("href"));
  route(null);
});
window.addEventListener("popstate", () => route());

getJson("/api/me").then((me) => {
  document.getElementById("who").textContent = me.name || "";
}).catch(() => {});
route();
