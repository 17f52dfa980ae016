// A conversation on screen: the newest page first, older pages on scroll up, live follow over
// server-sent events, and folds whose cut parts are read whole only when a person opens them.

import { conversationPath, getJson, page, wholePart } from "./api.js";
import { el, renderPart, subagentLabel } from "./parts.js";

export const PAGE = 15;
const OLDER_PAGE = 30;
const ALL_PAGE = 500;

const ROLES = { user: "User", assistant: "Assistant", system: "System" };

export function atBottom() {
  return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 48;
}

export function scrollToBottom() {
  window.scrollTo(0, document.documentElement.scrollHeight);
}

// Run `change` and keep the view at the bottom only if it was there before.
function stick(change) {
  const was = atBottom();
  change();
  if (was) scrollToBottom();
}

function cutSig(cut) {
  return cut ? `${cut.field}:${cut.bytes}:${cut.tail}` : null;
}

// What the panel knows about one part: its cut (if the page sent it cut), its whole form once
// read, and the state of that read. It outlives re-draws of its message.
class PartFold {
  constructor(view, msgId, index) {
    this.view = view;
    this.msgId = msgId;
    this.index = index;
    this.part = null;
    this.cut = null;
    this.whole = null;
    this.wholeSig = null;
    this.status = "idle";
    this.error = "";
    this.wanted = false; // a person opened this fold (not the browser's find)
    this.pending = null;
    this.el = null;
  }

  update(part, cut) {
    this.part = part;
    this.cut = cut || null;
    if (!this.cut || cutSig(this.cut) !== this.wholeSig) {
      this.whole = null;
      this.wholeSig = null;
    }
  }

  wholeFor() {
    return this.cut && this.whole && this.wholeSig === cutSig(this.cut) ? this.whole : null;
  }

  get needsRead() {
    return this.cut !== null && this.wholeFor() === null;
  }

  read({ user = false } = {}) {
    if (user) this.wanted = true;
    const ready = this.wholeFor();
    if (ready) return Promise.resolve(ready);
    if (!this.cut) return Promise.resolve(this.part);
    if (this.pending) return this.pending;
    const sig = cutSig(this.cut);
    this.status = "reading";
    this.view.redrawPart(this);
    this.pending = wholePart(this.view.base, this.msgId, this.index).then(
      (whole) => {
        this.pending = null;
        this.status = "idle";
        this.whole = whole;
        this.wholeSig = sig;
        this.view.redrawPart(this);
        if (this.el && this.el.open && this.wanted && this.needsRead) return this.read();
        return whole;
      },
      (error) => {
        this.pending = null;
        this.status = "failed";
        this.error = error && error.message ? error.message : "the request failed";
        this.view.redrawPart(this);
        throw error;
      },
    );
    return this.pending;
  }
}

export class Transcript {
  constructor(root, { agent, call = null, subagents = new Set(), subagentFold = null, onLive = null }) {
    this.root = root;
    this.agent = agent;
    this.call = call;
    this.base = conversationPath(agent, call);
    this.subagents = subagents;
    this.subagentFold = subagentFold || ((c, label) => this.makeSubagentFold(c, label));
    this.subFolds = new Map();
    this.children = [];
    this.onLive = onLive;
    this.folds = new Map();
    this.messages = new Map(); // id → {message, article}
    this.next = null;
    this.seq = 0;
    this.loading = false;
    this.source = null;
    this.stopped = false;

    this.older = el("div", "older");
    this.olderButton = el("button", "link", "Load older messages");
    this.olderButton.type = "button";
    this.olderButton.addEventListener("click", () => this.loadOlder());
    this.startButton = el("button", "link", "Jump to the start");
    this.startButton.type = "button";
    this.startButton.addEventListener("click", () => this.loadAll());
    this.olderStatus = el("span", "muted");
    this.older.append(this.olderButton, this.startButton, this.olderStatus);
    this.list = el("div", "messages");
    this.live = el("div", "live muted");
    this.orphans = el("section", "orphans");
    this.orphans.hidden = true;
    this.seenCalls = new Set(); // tool call ids drawn so far, to place each subagent's fold
    this.lastId = null; // the newest message drawn: only its tools may still be running
    this.root.append(this.older, this.orphans, this.list, this.live);
  }

  async start() {
    const first = await page(this.base, { limit: PAGE });
    this.next = first.next;
    this.seq = first.seq;
    for (const message of first.messages) this.append(message);
    this.updateOlder();
    this.placeOrphans();
    if (!first.messages.length) this.list.append(el("p", "muted empty", "No messages yet."));
    this.follow();
  }

  stop() {
    this.stopped = true;
    if (this.source) this.source.close();
    if (this.observer) this.observer.disconnect();
    for (const child of this.children) child.stop();
  }

  follow() {
    const url = this.base + "/events?since=" + encodeURIComponent(String(this.seq));
    this.source = new EventSource(url);
    this.source.onopen = () => this.setLive("Following live");
    this.source.onerror = () => this.setLive(this.source.readyState === EventSource.CLOSED ? "Not following" : "Reconnecting…");
    this.source.onmessage = (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      const seq = Number(event.lastEventId);
      if (Number.isFinite(seq)) this.seq = seq;
      stick(() => this.upsert(message));
      if (this.onLive) this.onLive(message);
    };
  }

  setLive(text) {
    this.live.textContent = text;
    this.live.dataset.state = text === "Following live" ? "live" : "off";
  }

  // Load older pages when the top comes into view; call once the newest page is in place.
  observeTop() {
    this.observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && this.next && !this.loading) this.loadOlder();
    });
    this.observer.observe(this.older);
  }

  updateOlder() {
    this.older.hidden = !this.next;
  }

  fold(msgId, index) {
    const key = msgId + "/" + index;
    let fold = this.folds.get(key);
    if (!fold) {
      fold = new PartFold(this, msgId, index);
      this.folds.set(key, fold);
    }
    return fold;
  }

  // Listen once per <details>: only a person's open (a click or a key on its summary) reads.
  wire(fold, details) {
    details.addEventListener("click", (event) => {
      const summary = event.target.closest("summary");
      if (summary && summary.parentElement === details) details.userToggle = true;
    });
    details.addEventListener("toggle", () => {
      const user = details.userToggle === true;
      details.userToggle = false;
      if (!user) return; // opened by find-in-page or by a script: show the ends, read nothing
      fold.wanted = details.open;
      if (details.open && fold.needsRead) fold.read().catch(() => {});
    });
  }

  drawPart(fold) {
    const node = renderPart(fold.msgId, fold.index, fold.part, fold, this);
    if (fold.el && fold.el.tagName === "DETAILS" && node.tagName === "DETAILS") {
      // Same row: keep the element (and so its open state), swap what it shows.
      fold.el.className = node.className;
      Object.assign(fold.el.dataset, node.dataset);
      fold.el.replaceChildren(...node.childNodes);
      return fold.el;
    }
    if (node.tagName === "DETAILS") this.wire(fold, node);
    fold.el = node;
    return node;
  }

  redrawPart(fold) {
    if (!fold.el || !fold.el.isConnected) return;
    const old = fold.el;
    stick(() => {
      const node = this.drawPart(fold);
      if (node !== old) old.replaceWith(node);
    });
  }

  renderMessage(message) {
    const role = typeof message.role === "string" ? message.role : "unknown";
    const article = el("article", "msg role-" + role.replace(/[^a-z]/g, ""));
    article.dataset.id = String(message.id);
    const head = el("div", "msg-head");
    head.append(el("span", "role", ROLES[role] || role));
    const meta = message.metadata && typeof message.metadata === "object" ? message.metadata : {};
    if (typeof meta.model === "string") head.append(el("span", "muted", meta.model));
    article.append(head);
    const skipped = new Set(Array.isArray(message.skippedParts) ? message.skippedParts : []);
    const cuts = new Map((message.cutParts || []).map((c) => [c.index, c]));
    const parts = Array.isArray(message.parts) ? message.parts : [];
    let index = 0;
    for (const part of parts) {
      const call = part && typeof part.toolCallId === "string" ? part.toolCallId : null;
      if (call !== null) this.seenCalls.add(call);
      while (skipped.has(index)) index += 1;
      const fold = this.fold(message.id, index);
      fold.update(part, cuts.get(index));
      article.append(this.drawPart(fold));
      // The subagent this call started sits right under the call's summary row, outside its fold.
      if (call !== null && this.subagents.has(call)) article.append(this.subagentFold(call, subagentLabel(part)));
      index += 1;
    }
    if (skipped.size) {
      article.append(el("p", "muted skipped", `${skipped.size} part(s) not shown: a retired tool or a stored row that no longer reads.`));
    }
    return article;
  }

  afterDraw(message) {
    for (const [key, fold] of this.folds) {
      if (!key.startsWith(message.id + "/")) continue;
      if (fold.el && fold.el.open && fold.wanted && fold.needsRead && !fold.pending) fold.read().catch(() => {});
    }
  }

  isLast(msgId) {
    return msgId === this.lastId;
  }

  append(message) {
    const empty = this.list.querySelector(".empty");
    if (empty) empty.remove();
    const before = this.lastId !== null ? this.messages.get(this.lastId) : null;
    this.lastId = message.id;
    const article = this.renderMessage(message);
    this.messages.set(message.id, { message, article });
    this.list.append(article);
    // The message that was last is no longer: a tool it shows as running got no result.
    if (before && before.message.id !== message.id && hasPendingTool(before.message)) this.upsert(before.message);
  }

  upsert(message) {
    const known = this.messages.get(message.id);
    if (!known) {
      this.append(message);
      return;
    }
    const article = this.renderMessage(message);
    known.article.replaceWith(article);
    this.messages.set(message.id, { message, article });
    this.afterDraw(message);
  }

  redrawAll() {
    for (const { message } of [...this.messages.values()]) stick(() => this.upsert(message));
    this.placeOrphans();
  }

  async loadOlder(limit = OLDER_PAGE) {
    if (!this.next || this.loading) return;
    this.loading = true;
    this.olderStatus.textContent = "Loading…";
    try {
      const older = await page(this.base, { limit, before: this.next });
      const anchor = this.list.firstElementChild;
      const top = anchor ? anchor.getBoundingClientRect().top : 0;
      const fragment = document.createDocumentFragment();
      for (const message of older.messages) {
        if (this.messages.has(message.id)) continue;
        const article = this.renderMessage(message);
        this.messages.set(message.id, { message, article });
        fragment.append(article);
      }
      this.list.prepend(fragment);
      if (anchor) window.scrollBy(0, anchor.getBoundingClientRect().top - top);
      this.next = older.next;
      this.olderStatus.textContent = "";
      this.placeOrphans();
    } catch (error) {
      this.olderStatus.textContent = "Could not load older messages: " + error.message;
    } finally {
      this.loading = false;
      this.updateOlder();
    }
  }

  async loadAll() {
    while (this.next && !this.stopped) {
      await this.loadOlder(ALL_PAGE);
      if (this.olderStatus.textContent) break;
    }
    if (this.call === null) window.scrollTo(0, 0);
    else this.root.scrollIntoView({ block: "start" });
  }

  // Subagents whose starting tool call is not in this conversation get folds of their own at
  // the top, once every page is loaded (before that, their call may be on an older page).
  placeOrphans() {
    if (this.call !== null || this.next) return;
    const calls = [...this.subagents].filter((c) => !this.seenCalls.has(c));
    if (!calls.length) return;
    this.orphans.replaceChildren(el("h3", "muted", "Subagents"), ...calls.map((c) => this.subagentFold(c)));
    this.orphans.hidden = false;
  }

  makeSubagentFold(call, label = null) {
    let details = this.subFolds.get(call);
    if (details) {
      if (label) details.querySelector(":scope > summary > .subagent-name").textContent = label;
      return details;
    }
    details = el("details", "fold subagent");
    details.dataset.call = call;
    const s = el("summary");
    const name = el("span", "subagent-name", label || call);
    name.title = call;
    s.append(el("span", "kind", "Subagent"), el("span", "sep", "·"), name);
    const body = el("div", "fold-body");
    details.append(s, body);
    let started = false;
    details.addEventListener("toggle", () => {
      if (!details.open || started) return;
      started = true;
      const child = new Transcript(body, {
        agent: this.agent,
        call,
        subagents: this.subagents,
        subagentFold: this.subagentFold,
      });
      this.children.push(child);
      child.start().catch((error) => body.append(el("p", "error", "Could not read the subagent: " + error.message)));
    });
    this.subFolds.set(call, details);
    return details;
  }
}

function hasPendingTool(message) {
  const parts = Array.isArray(message.parts) ? message.parts : [];
  return parts.some((p) => p && (p.state === "input-available" || p.state === "input-streaming") && typeof p.type === "string" && (p.type.startsWith("tool-") || p.type === "dynamic-tool"));
}

export async function agentInfo(agent) {
  return getJson("/api/agents/" + encodeURIComponent(agent));
}
