// The panel: the agents of each workspace, and an agent's transcript at /agents/{agent}.
// Opened from a share link (/s/{token}), it shows that one agent read-only: no agents list, no
// search across the workspace, no account, nothing that writes.

import { addressTarget, hitAddress, hitTarget } from "./address.js";
import { ApiError, conversationPath, getJson, openedShare, page, shareToken } from "./api.js";
import { FORMATS, copyText, downloadLink, exportText } from "./export.js";
import { watchRedactions } from "./redactions.js";
import { el } from "./dom.js";
import { afterPaint, firstViewAgent, layAll, layOutScreen, shellFirstView } from "./firstview.js";
import { relativeTime } from "./format.js";
import { deleteButton } from "./remove.js";
import { shareButton } from "./shares.js";
import { sampleBadge, samplesNote } from "./samples.js";
import { plainText } from "./markdown.js";
import { Shortcuts } from "./keys.js";
import { FindBar, MatchSteps, SearchBox } from "./search.js";
import { PAGE, Transcript, agentInfo, outlineButton, scrollToBottom } from "./transcript.js";

const main = document.getElementById("main");
watchRedactions(main);
const crumb = document.getElementById("crumb");
let current = null; // the transcript on screen
let currentView = null; // {agent, transcript, status}
let showing = null; // the token of the place being shown: a newer one makes it stale
// The signed-in account: its name in the bar, Delete for an owner. A share link has no account
// (and writes nothing): it never asks, and nothing waiting on it is drawn.
const whoAmI = shareToken == null ? getJson("/api/me") : new Promise(() => {});

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

// Who wrote an agent, by its source's name: foldline/sources.py's table (tests/test_sources.py keeps them equal).
const SOURCES = {
  "claude-code": "Claude Code",
  codex: "Codex",
  "gemini-cli": "Gemini CLI",
  "copilot-cli": "GitHub Copilot CLI",
  "copilot-vscode": "Copilot Chat (VS Code)",
  cursor: "Cursor",
  amp: "Amp",
  aider: "Aider",
  crush: "Crush",
  opencode: "opencode",
  openhands: "OpenHands",
  continue: "Continue",
  windsurf: "Windsurf",
  pi: "pi",
  droid: "Factory Droid",
  antigravity: "Google Antigravity",
  api: "API",
};
const SORTS = [
  ["activity", "Last activity"],
  ["messages", "Messages"],
  ["tokens", "Tokens"],
  ["cost", "Cost"],
  ["title", "Title"],
];
const AGENTS_PAGE = 50;
// How often an open agents list asks whether its first page changed (new agents, new activity),
// while the tab is visible: imports and --watch add agents as they run.
const AGENTS_REFRESH_MS = 5000;

// 1234 -> "1.2k", 2500000 -> "2.5M": a count that fits a narrow column.
export function shortCount(n) {
  if (!Number.isFinite(n)) return "";
  if (n < 1000) return String(n);
  if (n < 1e6) return (n / 1e3).toFixed(n < 1e4 ? 1 : 0) + "k";
  if (n < 1e9) return (n / 1e6).toFixed(n < 1e7 ? 1 : 0) + "M";
  return (n / 1e9).toFixed(1) + "B";
}

export function money(usd) {
  if (usd === null || usd === undefined) return "cost unknown";
  if (usd === 0) return "$0";
  if (usd < 0.01) return "<$0.01";
  return "$" + usd.toFixed(usd < 100 ? 2 : 0);
}

// Tokens and cost in one short text, with the detail (and the price table) on hover.
export function usageNote(usage, prices) {
  const span = el("span", "usage");
  if (!usage || !usage.total_tokens) return span;
  const known = usage.cost_usd === null && usage.priced_cost_usd ? money(usage.priced_cost_usd) + " + ?" : money(usage.cost_usd);
  span.textContent = shortCount(usage.total_tokens) + " tok · " + known;
  const table = prices && prices.version ? `${prices.source} ${prices.version}` : "genai-prices";
  span.title =
    `input ${usage.input_tokens} (cache read ${usage.cache_read_tokens}, cache write ${usage.cache_write_tokens}), ` +
    `output ${usage.output_tokens}; estimated cost from ${table}` +
    (usage.cost_usd === null
      ? ` (${usage.unpriced_messages} messages of a model whose price is not known are not in the sum)`
      : "");
  return span;
}

function folderName(path) {
  const parts = String(path).split(/[\\/]/).filter(Boolean);
  return parts.length ? parts[parts.length - 1] : String(path);
}

// Each folder by as many of its last names as tell it from the others': three projects whose
// folders are all called "cli" read "api/cli", "web/cli", "tools/cli".
export function folderNames(paths) {
  const split = paths.map((p) => String(p).split(/[\\/]/).filter(Boolean));
  const tail = (parts, n) => parts.slice(-n).join("/") || "/";
  return split.map((parts) => {
    for (let n = 1; n < parts.length; n++) {
      const name = tail(parts, n);
      if (split.every((other) => other === parts || tail(other, n) !== name)) return name;
    }
    return tail(parts, parts.length);
  });
}

function agentRow(agent, prices) {
  const li = el("li");
  li.dataset.agent = agent.id;
  const top = el("div", "agent-top");
  if (agent.live) {
    const dot = el("span", "live-mark", "live");
    dot.title = "written to in the last 5 minutes";
    top.append(dot);
  }
  top.append(navLink("/agents/" + encodeURIComponent(agent.id), titleText(agent.title), "agent-title"));
  const when = el("time", "muted", relativeTime(agent.updated_at));
  when.dateTime = agent.updated_at;
  when.title = agent.updated_at;
  top.append(when);
  const facts = el("div", "agent-facts muted");
  const add = (className, text, title) => {
    if (!text) return;
    const span = el("span", className, text);
    if (title) span.title = title;
    facts.append(span);
  };
  add("source", SOURCES[agent.source] || "");
  if (agent.project) add("project", folderName(agent.project), agent.project);
  add("branch", agent.branch || "", "git branch");
  add("model", agent.model || "");
  add("count", agent.messages === 1 ? "1 message" : `${agent.messages || 0} messages`);
  const usage = usageNote(agent.usage, prices);
  if (usage.textContent) facts.append(usage);
  li.append(top, facts);
  return li;
}

function select(label, className, options, value, onChange) {
  const wrap = el("label", "control " + className);
  wrap.append(el("span", "", label + " "));
  const box = el("select");
  for (const [v, text] of options) {
    const option = el("option", "", text);
    option.value = v;
    option.selected = v === value;
    box.append(option);
  }
  box.addEventListener("change", () => onChange(box.value));
  wrap.append(box);
  return wrap;
}

// The agents list's choices are kept in the address (so a reload or Back keeps them): for each
// workspace whose choices are not the defaults, `workspace=<id>` followed by its `sort`, `source`,
// and `project` or `no_project=true`, as the API names them. Written with replaceState.
const LIST_KEYS = ["sort", "source", "project", "no_project"];
const listStates = new Map(); // workspace id → its list's choices, in the order drawn

function addressChoices() {
  const found = new Map();
  let current = null;
  for (const [key, value] of new URLSearchParams(location.search)) {
    if (key === "workspace") found.set(value, (current = {}));
    else if (current && LIST_KEYS.includes(key)) current[key] = value;
  }
  return found;
}

function writeChoices() {
  if (location.pathname !== "/") return;
  const params = new URLSearchParams();
  for (const [key, value] of new URLSearchParams(location.search)) {
    if (key !== "workspace" && !LIST_KEYS.includes(key)) params.append(key, value); // not ours: kept
  }
  for (const [id, state] of listStates) {
    const chosen = [];
    if (state.sort !== "activity") chosen.push(["sort", state.sort]);
    if (state.source) chosen.push(["source", state.source]);
    if (state.noProject) chosen.push(["no_project", "true"]);
    else if (state.project) chosen.push(["project", state.project]);
    if (!chosen.length) continue;
    params.append("workspace", id);
    for (const [key, value] of chosen) params.append(key, value);
  }
  const q = params.toString();
  history.replaceState(history.state, "", "/" + (q ? "?" + q : "") + location.hash);
}

// A workspace's choices as the address gives them; what the panel does not offer is left out.
function choicesOf(asked) {
  const noProject = asked.no_project === "true" && !asked.project;
  return {
    sort: SORTS.some(([value]) => value === asked.sort) ? asked.sort : "activity",
    source: asked.source && Object.hasOwn(SOURCES, asked.source) ? asked.source : "",
    project: !noProject && asked.project ? asked.project : "",
    noProject,
  };
}

// The Project select's values: "" all, "none" the agents with no project, "p:" + a folder.
const NO_PROJECT = "none";

// One workspace's agents: sort and filters above, pages read 50 at a time ("Show more agents").
async function workspaceAgents(section, workspace, chosen = {}) {
  const state = choicesOf(chosen);
  listStates.set(workspace.id, state);
  const filtered = () => Boolean(state.source || state.project || state.noProject);
  const controls = el("div", "agent-controls");
  const ul = el("ul", "agent-list");
  const more = button("Show more agents", () => load(false), "more-agents");
  const empty = el("p", "muted", "No agents yet.");
  section.append(controls, ul, empty, more);
  let cursor = null;
  let facets = null;
  let prices = null;
  let asked = 0;
  let pages = 0; // pages shown since the last fresh load
  let seen = ""; // what the first page held: its agents' ids, activity and counts
  const glance = (agents) => agents.map((a) => `${a.id} ${a.updated_at} ${a.messages}`).join("|");
  function query(fresh) {
    const params = new URLSearchParams({ workspace_id: workspace.id, sort: state.sort, limit: String(AGENTS_PAGE) });
    if (state.source) params.set("source", state.source);
    if (state.noProject) params.set("no_project", "true");
    else if (state.project) params.set("project", state.project);
    if (!fresh && cursor) params.set("cursor", cursor);
    return "/api/agents?" + params.toString();
  }
  async function load(fresh) {
    const mine = ++asked;
    const page = await getJson(query(fresh));
    if (mine !== asked) return; // a newer sort or filter was asked for meanwhile
    if (fresh) {
      ul.replaceChildren();
      pages = 0;
      seen = glance(page.agents);
      // The filters' choices come from an unfiltered page (a filtered one would offer only itself).
      if (page.facets && (!facets || !filtered())) facets = page.facets;
      fresher.hidden = true;
    }
    pages += 1;
    prices = page.prices || prices;
    for (const agent of page.agents) {
      const row = agentRow(agent, prices);
      if (workspace.samples) row.querySelector(".agent-title").after(sampleBadge());
      ul.append(row);
    }
    cursor = page.next;
    more.hidden = !cursor;
    empty.hidden = ul.children.length > 0;
    if (fresh) drawControls();
    controls.hidden = !ul.children.length && !filtered(); // nothing to sort or filter
  }
  function drawControls() {
    const sources = [["", "All sources"], ...(facets ? facets.sources : []).filter((f) => f.value).map((f) => [f.value, `${SOURCES[f.value] || f.value} (${f.agents})`])];
    if (state.source && !sources.some(([value]) => value === state.source)) sources.push([state.source, SOURCES[state.source]]);
    const found = (facets ? facets.projects : []).filter((f) => f.value);
    if (state.project && !found.some((f) => f.value === state.project)) found.push({ value: state.project, agents: 0 });
    const names = folderNames(found.map((f) => f.value));
    const projects = [["", "All projects"], ...found.map((f, i) => ["p:" + f.value, f.agents ? `${names[i]} (${f.agents})` : names[i]])];
    const none = (facets ? facets.projects : []).find((f) => f.value == null);
    if ((none && found.length) || state.noProject) projects.push([NO_PROJECT, none ? `No project (${none.agents})` : "No project"]);
    const pick = (key) => (value) => {
      state[key] = value;
      writeChoices();
      load(true);
    };
    const pickProject = (value) => {
      state.noProject = value === NO_PROJECT;
      state.project = value.startsWith("p:") ? value.slice(2) : "";
      writeChoices();
      load(true);
    };
    const project = state.noProject ? NO_PROJECT : state.project ? "p:" + state.project : "";
    controls.replaceChildren(select("Sort", "sort", SORTS, state.sort, pick("sort")));
    if (sources.length > 1 || state.source) controls.append(select("Source", "source", sources, state.source, pick("source")));
    if (projects.length > 1 || project) controls.append(select("Project", "project", projects, project, pickProject));
  }
  // Live: the first page asked again every few seconds; a change is drawn at once when only the
  // first page is shown (more pages read stay as they are, and a note offers the new ones).
  const fresher = button("New activity: show it", () => load(true), "agents-changed");
  fresher.hidden = true;
  section.insertBefore(fresher, ul);
  async function look() {
    if (document.hidden || !section.isConnected) return;
    const mine = asked;
    let page;
    try {
      page = await getJson(query(true));
    } catch {
      return; // the next look tries again
    }
    if (mine !== asked || glance(page.agents) === seen) return;
    if (pages > 1) {
      fresher.hidden = false;
      return;
    }
    fresher.hidden = true;
    await load(true);
  }
  setInterval(look, AGENTS_REFRESH_MS);
  await load(true);
}

async function agentsView() {
  crumb.replaceChildren(el("span", "sep", "/"), el("h1", "", "Agents")); // the page's name
  document.title = "Foldline";
  const me = await getJson("/api/me");
  document.getElementById("who").textContent = me.name || "";
  const view = el("div", "agents");
  if (!me.workspaces.length) view.append(el("p", "muted", "You are not in any workspace yet."));
  const names = new Map();
  for (const w of me.workspaces) names.set(w.name, (names.get(w.name) || 0) + 1);
  const spaces = [...me.workspaces.filter((w) => !w.samples), ...me.workspaces.filter((w) => w.samples)]; // the samples last
  const asked = addressChoices();
  listStates.clear();
  const loads = spaces.map((workspace) => {
    const section = el("section", "workspace");
    section.dataset.workspace = workspace.id;
    const heading = el("h2", "", workspace.name);
    // Two workspaces of the same name: a short id tells them apart.
    if (names.get(workspace.name) > 1) heading.append(el("span", "ws-id", " · " + String(workspace.id).slice(0, 8)));
    section.append(heading);
    if (workspace.samples) {
      section.classList.add("samples");
      section.append(samplesNote());
    }
    view.append(section);
    return workspaceAgents(section, workspace, asked.get(workspace.id));
  });
  await Promise.all(loads);
  main.replaceChildren(view);
}

// Under the toolbar: where the agent ran, its messages, and its tokens and estimated cost by model.
function agentSummary(info) {
  const line = agentRow(info, info.prices).querySelector(".agent-facts");
  line.classList.add("agent-summary");
  for (const entry of info.usage_by_model || []) {
    if (!entry.total_tokens) continue;
    const span = usageNote(entry, info.prices);
    span.textContent = (entry.model || "no model") + ": " + span.textContent;
    span.classList.add("by-model");
    line.append(span);
  }
  if (info.usage && info.usage.total_tokens && info.prices) {
    line.append(el("span", "prices", `prices: ${info.prices.source} ${info.prices.version || ""}`.trim()));
  }
  return line;
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
  // A share link's reader copies and downloads too (its own export route); sharing is a member's.
  const exports = [
    button("Copy transcript", () => run("Copy transcript", () => copyText(exportText(info.id, "md"))), "copy-transcript"),
    ...Object.keys(FORMATS).map((format) => downloadLink(info.id, format, fileName(info, format))),
    ...(shareToken != null ? [] : [shareButton(info)]),
  ];
  bar.append(...exports, outlineButton(), status);
  whoAmI.then((me) => {
    const remove = deleteButton(info, me);
    if (remove) status.before(remove);
  }).catch(() => {});
  return bar;
}

// The page scrolls a place into view below the sticky bars: its scroll padding follows their height.
let clearing = null;
function keepClear(head) {
  if (clearing) clearing.disconnect();
  const root = document.documentElement;
  const bar = document.querySelector(".bar");
  const set = () => {
    const bottom = head.isConnected ? head.getBoundingClientRect().height + (bar ? bar.offsetHeight : 0) : 0;
    root.style.scrollPaddingTop = bottom ? Math.ceil(bottom) + 8 + "px" : "";
  };
  clearing = new ResizeObserver(set);
  clearing.observe(head);
  set();
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

// The agent and its newest page: from the shell, else both read at once (no waterfall).
function firstReads(agent) {
  const held = shellFirstView(agent);
  if (held) return { first: Promise.resolve(held.page), info: Promise.resolve(held.agent) };
  const first = page(conversationPath(agent), { limit: PAGE });
  first.catch(() => {}); // an agent not found answers through its own read below
  return { first, info: agentInfo(agent) };
}

async function transcriptView(agent, target) {
  const reads = firstReads(agent);
  const first = reads.first;
  let info;
  try {
    info = await reads.info;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      const gone = shareToken == null ? "This agent was not found, or you are not in its workspace." : "This share link is not valid: it was revoked, or it expired.";
      main.replaceChildren(el("p", "notice", gone));
      return;
    }
    throw error;
  }
  document.title = titleText(info.title) + " · Foldline";
  crumb.replaceChildren(el("span", "sep", "/"), el("h1", "", titleText(info.title)));
  const view = el("div", "agent");
  const status = el("span", "muted status");
  status.setAttribute("role", "status");
  // The toolbar, the agent's facts and the find bar stay under the page's bar wherever the
  // reader is (the transcript opens at its newest end); scrolling to a place keeps clear of them.
  const head = el("div", "agent-head");
  const facts = agentSummary(info);
  facts.title = [...facts.children].map((n) => n.textContent).join(" · "); // one line here: all of it on hover
  head.append(toolbar(info, status), facts);
  view.append(head);
  keepClear(head);
  const body = el("div", "transcript");
  const note = el("p", "notice show-note");
  note.setAttribute("role", "status");
  // A result opened from the search box with more than one match: next/previous through them.
  const steps = new MatchSteps({
    show: (hit) => {
      history.replaceState(null, "", hitAddress(hit));
      return show(hitTarget(hit));
    },
  });
  const find = new FindBar({
    agent,
    show: (hit) => {
      steps.set(null);
      history.replaceState(null, "", hitAddress(hit));
      return show(hitTarget(hit));
    },
    clear: () => transcript.clearMarks(),
  });
  head.append(find.node, steps.node);
  view.append(note, body);
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
  // The first view: the newest page, laid out a screen's worth first; the messages above the
  // screen are laid out and the closed folds' bodies built once it is painted.
  const shown = transcript.start(first, { later: true }).then(() => {
    const skipped = layOutScreen(transcript.list);
    scrollToBottom();
    performance.mark("foldline:newest-page"); // read by bench/panel_load.py
    return skipped;
  });
  const ready = shown.then(async (skipped) => {
    await afterPaint();
    layAll(skipped);
    transcript.buildWaiting();
  });
  ready.catch(() => {}); // a failed read is told through `shown`
  currentView = { agent, transcript, note, ready, steps };
  await shown;
  await ready;
  if (target) {
    steps.set(target.result || null);
    await show(target, { focus: true }).catch(() => {});
  }
  transcript.observeTop();
}

function agentOf(path) {
  const match = /^\/agents\/([^/]+)\/?$/.exec(path);
  return match ? decodeURIComponent(match[1]) : null;
}

// A share link's agent: the shell's first view names it, else the API says.
let sharedAgent = null;
async function shareAgent() {
  if (sharedAgent == null) sharedAgent = firstViewAgent() || (await openedShare()).agent_id;
  return sharedAgent;
}

// Draw what the address says. On the same agent, only the place in it changes.
async function route(target = addressTarget()) {
  let agent;
  try {
    agent = shareToken == null ? agentOf(location.pathname) : await shareAgent();
  } catch (error) {
    main.replaceChildren(el("p", "notice", "This share link is not valid: it was revoked, or it expired."));
    document.body.dataset.ready = "1";
    return;
  }
  if (agent !== null && currentView && currentView.agent === agent && current && !current.stopped) {
    if (target) {
      currentView.steps.set(target.result || null);
      await show(target, { focus: true }).catch(() => {});
    }
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
if (shareToken == null) {
  const searchButton = el("button", "search-open", "Search");
  searchButton.type = "button";
  searchButton.title = "Search every transcript (/ or Ctrl+K)";
  searchButton.setAttribute("aria-keyshortcuts", "/ Control+K Meta+K");
  searchButton.setAttribute("aria-haspopup", "dialog");
  searchButton.append(el("kbd", "", "/"));
  searchButton.addEventListener("click", () => searchBox.open());
  document.getElementById("crumb").after(searchButton);
} else {
  sharedBar();
}

// A share link's bar: the brand is not a link (there is no agents list to go to), no account, no sign-out.
function sharedBar() {
  const brand = document.querySelector(".bar .brand");
  if (brand) brand.replaceWith(el("span", "brand", "Foldline"));
  const signout = document.getElementById("signout");
  if (signout) signout.closest("form").remove();
  document.getElementById("who").textContent = "Shared, read-only";
  document.body.classList.add("shared");
}

// Typing somewhere: `/` is a character there, not the shortcut.
function typing(target) {
  if (!(target instanceof Element)) return false;
  return target.closest("input, textarea, select, [contenteditable]:not([contenteditable=false])") !== null;
}

document.addEventListener("keydown", (event) => {
  if (event.defaultPrevented || shareToken != null) return; // a share searches only inside it (its find field)
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

whoAmI.then((me) => {
  document.getElementById("who").textContent = me.name || "";
}).catch(() => {});
route();
