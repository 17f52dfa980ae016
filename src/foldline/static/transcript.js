// A conversation on screen: the newest page first, older pages on scroll up, live follow over
// server-sent events, and folds whose cut parts are read whole only when a person opens them.

import { ApiError, agentPath, conversationPath, getJson, openedShare, page, partSlice, shareToken, wholePart } from "./api.js";
import { cpLength, cpSlice } from "./marks.js";
import { el } from "./dom.js";
import { absoluteTime, clockTime, duration, formatTokens } from "./format.js";
import { buildBody, drawLater, fieldText, renderPart } from "./parts.js";
import { subagentLabel } from "./tools.js";

export const PAGE = 15;
const OLDER_PAGE = 30;
const ALL_PAGE = 500;
const SEEK_PAGE = 100; // pages read back to reach a message a search hit is in

// A cut part over this size (its whole field, in UTF-8 bytes) is never read whole by the panel:
// it is read in slices: windows around matches, and "show more".
export const WHOLE_LIMIT = 1024 * 1024;
export const MORE = 65536; // code points a "show more" reads
export const CONTEXT = 2000; // code points read each side of a match in a cut middle
const COPY_SLICE = 1 << 20; // code points per slice when a big field is copied

const ROLES = { user: "User", assistant: "Assistant", system: "System" };

// Outline: an assistant's texts are one-line folds too, so a message is one line (its thought,
// its text and its call side by side) until a fold opens. A person's choice, kept in this
// browser; every transcript on the page (subagents too) follows it.
const OUTLINE_KEY = "foldline:outline";
const shown = new Set(); // the transcripts on the page

export function outlineOn() {
  try {
    return localStorage.getItem(OUTLINE_KEY) === "1";
  } catch {
    return false;
  }
}

// Read every older page of the transcript on the page (its subagents' stay as they are), as
// "Jump to the start" does: the `g` key's first message is the transcript's.
export function loadStart() {
  const main = [...shown].find((t) => t.call === null);
  return main ? main.loadAll() : Promise.resolve();
}

export function setOutline(on) {
  try {
    localStorage.setItem(OUTLINE_KEY, on ? "1" : "0");
  } catch {
    // storage refused (a private window): the choice lasts while the page does
  }
  for (const t of shown) t.setOutline(on);
  for (const b of document.querySelectorAll("button.outline-toggle")) b.setAttribute("aria-pressed", String(on));
}

// The toolbar's switch (the `v` key does the same).
export function outlineButton() {
  const b = el("button", "outline-toggle", "Outline");
  b.type = "button";
  b.title = "Every message one line: its thought, text and tool call side by side (v)";
  b.setAttribute("aria-pressed", String(outlineOn()));
  b.addEventListener("click", () => setOutline(b.getAttribute("aria-pressed") !== "true"));
  return b;
}

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
    this.windows = []; // slices of the cut field read so far: [{start, end, text}], sorted, apart
    this.length = null; // the cut field's length in code points, once a slice said it
    this.windowSig = null;
    this.slicing = "idle";
    this.sliceError = "";
    this.marks = []; // [{field, start, end, current}]
  }

  update(part, cut) {
    this.part = part;
    this.cut = cut || null;
    if (!this.cut || cutSig(this.cut) !== this.wholeSig) {
      this.whole = null;
      this.wholeSig = null;
    }
    if (cutSig(this.cut) !== this.windowSig) {
      this.windows = [];
      this.length = null;
      this.windowSig = cutSig(this.cut);
    }
  }

  // Over 1 MB: never read whole, only in slices.
  get big() {
    return this.cut !== null && this.cut.field !== "url" && this.cut.bytes > WHOLE_LIMIT;
  }

  // Read code points [start, end) of the cut field and keep them as a window.
  async window(start, end) {
    const cut = this.cut;
    if (!cut) return;
    const sig = cutSig(cut);
    this.slicing = "reading";
    this.view.redrawPart(this);
    try {
      const got = await partSlice(this.view.base, this.msgId, this.index, cut.field, start, end);
      this.slicing = "idle";
      if (cutSig(this.cut) !== sig) return; // the part changed meanwhile: this slice is of the old one
      this.length = got.length;
      if (got.end > got.start) this.keep({ start: got.start, end: got.end, text: got.text });
    } catch (error) {
      this.slicing = "failed";
      this.sliceError = error && error.message ? error.message : "the request failed";
      throw error;
    } finally {
      this.view.redrawPart(this);
    }
  }

  keep(w) {
    const all = [...this.windows, w].sort((x, y) => x.start - y.start);
    const merged = [];
    for (const next of all) {
      const last = merged[merged.length - 1];
      if (last && next.start <= last.end) {
        if (next.end > last.end) {
          last.text = last.text + cpSlice(next.text, last.end - next.start, next.end - next.start);
          last.end = next.end;
        }
      } else merged.push({ ...next });
    }
    this.windows = merged;
  }

  // "Show more" in the gap [from, to): the next 64 KB after what is above, or before what is below.
  // The keyboard stays where it was: on the same button of the gap that is left, if any.
  async more(from, to, direction) {
    const before = direction === "before" && to !== null;
    const [a, b] = before ? [Math.max(from, to - MORE), to] : [from, to === null ? from + MORE : Math.min(to, from + MORE)];
    const focused = this.el && this.el.contains(document.activeElement);
    try {
      await this.window(a, b);
    } finally {
      if (focused && this.el) {
        const next = before ? `.cut-mark[data-to="${a}"] button.more-before` : `.cut-mark[data-from="${b}"] button.more`;
        const target = this.el.querySelector(next) || this.el.querySelector(`.cut-mark[data-from="${from}"] button`) || this.el.querySelector("summary");
        if (target) target.focus();
      }
    }
  }

  // Whether code points [start, end) of the cut field are on screen (head, windows or tail).
  shows(start, end) {
    if (!this.cut) return true;
    const head = cpLength(this.cut.head);
    if (end <= head) return true;
    if (this.length !== null && start >= this.length - cpLength(this.cut.tail)) return true;
    return this.windows.some((w) => w.start <= Math.max(start, head) && w.end >= end);
  }

  // The whole text of the field (for Copy): one whole read, or slices for a big part.
  async fieldText() {
    if (!this.big) return fieldText(await this.read({ user: true }), this.cut.field);
    const pieces = [];
    let at = 0;
    for (;;) {
      const got = await partSlice(this.view.base, this.msgId, this.index, this.cut.field, at, at + COPY_SLICE);
      pieces.push(got.text);
      at = got.end;
      if (at >= got.length || got.end <= got.start) break;
    }
    return pieces.join("");
  }

  wholeFor() {
    return this.cut && this.whole && this.wholeSig === cutSig(this.cut) ? this.whole : null;
  }

  get needsRead() {
    return this.cut !== null && !this.big && this.wholeFor() === null;
  }

  read({ user = false } = {}) {
    if (user) this.wanted = true;
    const ready = this.wholeFor();
    if (ready) return Promise.resolve(ready);
    if (!this.cut) return Promise.resolve(this.part);
    if (this.big) return Promise.reject(new Error("a part over 1 MB is read in slices"));
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
    this.loading = null; // the older page being read, if any
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
    this.outline = outlineOn();
    this.list.classList.toggle("outline", this.outline);
    shown.add(this);
    this.live = el("div", "live muted");
    this.orphans = el("section", "orphans");
    this.orphans.hidden = true;
    this.seenCalls = new Set(); // tool call ids drawn so far, to place each subagent's fold
    this.lastId = null; // the newest message drawn: only its tools may still be running
    this.root.append(this.older, this.orphans, this.list, this.live);
  }

  // `first`: the newest page's read, when the caller started it already (with the agent's).
  // `later`: leave its closed folds' bodies for buildWaiting(), which then starts following live
  // (so "Following live" means every body is built): the first view.
  async start(first = null, { later = false } = {}) {
    first = await (first || page(this.base, { limit: PAGE }));
    this.next = first.next;
    this.seq = first.seq;
    const draw = () => {
      for (const message of first.messages) this.append(message);
    };
    if (later) this.waiting = drawLater(draw);
    else draw();
    this.updateOlder();
    this.placeOrphans();
    if (!first.messages.length) this.list.append(el("p", "muted empty", "No messages yet."));
    if (!later) this.follow();
  }

  // Build the fold bodies the first view left for later (see parts.js drawLater), then follow.
  buildWaiting() {
    const bodies = this.waiting || [];
    this.waiting = null;
    for (const body of bodies) buildBody(body);
    if (!this.stopped && !this.source) this.follow();
  }

  stop() {
    this.stopped = true;
    shown.delete(this);
    if (this.source) this.source.close();
    if (this.observer) this.observer.disconnect();
    for (const child of this.children) child.stop();
  }

  follow() {
    const url = this.base + "/events?since=" + encodeURIComponent(String(this.seq));
    this.source = new EventSource(url);
    this.source.onopen = () => this.setLive("Following live");
    this.source.onerror = () => {
      this.setLive(this.source.readyState === EventSource.CLOSED ? "Not following" : "Reconnecting…");
      if (shareToken != null) this.shareEnded();
    };
    // The agent was deleted (here or elsewhere): the server's last event, then it ends the stream.
    this.source.addEventListener("deleted", () => {
      this.source.close();
      this.stopped = true;
      this.setLive("This agent was deleted");
    });
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

  // A share link's stream ended or failed: when the link no longer opens (revoked, or expired),
  // say so and stop, instead of reconnecting to the one not-found.
  async shareEnded() {
    const source = this.source;
    try {
      await openedShare();
      return;
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) return;
    }
    if (this.source !== source || this.stopped) return;
    source.close();
    this.stopped = true;
    this.setLive("This share link was revoked or has expired: nothing more will be shown.");
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
      if (details.open) buildBody(details.querySelector(":scope > .fold-body"));
      if (this.outline) thoughtRuns(this.list); // its row changed: an open fold takes one of its own
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
    const meta = message.metadata && typeof message.metadata === "object" ? message.metadata : {};
    const at = messageTime(message);
    // The time sits in a gutter on the left; the head (role, model, the turn's facts) is filled
    // in by regroup(), which knows the neighbours.
    const gutter = el("div", "msg-gutter");
    if (at !== null) {
      const time = el("time", "msg-time");
      time.dateTime = new Date(at).toISOString();
      article.dataset.at = String(at);
      gutter.append(time);
    }
    const body = el("div", "msg-body");
    const head = el("div", "msg-head");
    head.append(el("span", "role", ROLES[role] || role));
    if (typeof meta.model === "string") head.append(el("span", "model", meta.model));
    body.append(head);
    article.append(gutter, body);
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
      fold.meta = meta;
      fold.outline = this.outline && role === "assistant";
      body.append(this.drawPart(fold));
      // The subagent this call started sits right under the call's summary row, outside its fold.
      if (call !== null && this.subagents.has(call)) body.append(this.subagentFold(call, subagentLabel(part)));
      index += 1;
    }
    // Claude Code's own doings (a slash command, its output, a caveat, a compaction) are not a
    // person's prompt: no bubble, no head, and they do not start a turn.
    const drawn = [...body.children].filter((n) => n.dataset && n.dataset.part !== undefined);
    const own = drawn.filter((n) => n.dataset.cc || n.classList.contains("meta"));
    if (drawn.length && own.length === drawn.length) {
      article.classList.add("cc");
      article.dataset.cc = own[0].dataset.cc || "meta";
    }
    if (meta.isMeta === true || meta.compactSummary === true) article.classList.add("cc");
    if (meta.subtype === "compact_boundary" || (meta.compaction === true && meta.compactSummary !== true)) article.classList.add("compact-boundary");
    if (skipped.size) {
      body.append(el("p", "muted skipped", `${skipped.size} part(s) not shown: a retired tool or a stored row that no longer reads.`));
    }
    return article;
  }

  // Consecutive assistant messages of one turn sit under one quiet head: the first shows the
  // model, the turn's duration (from the prompt before it to its last message) and tokens when
  // known; the others show no head (unless the model changes). Every message keeps its time.
  regroup() {
    let prev = null; // {role, model, article}
    let prompt = null; // the time of the user prompt this turn answers
    let first = null; // the first article of the current assistant run
    let runEnd = null;
    let runTokens = null;
    let dated = null; // the last time shown: a clock time carries its date only where the day changes
    let fileTimes = false; // the run's times are its log file's (the log has none): no "took"
    const finish = () => {
      if (!first) return;
      const facts = first.querySelector(":scope > .msg-body > .msg-head > .turn");
      const bits = [];
      const start = prompt ?? null;
      if (!fileTimes && start !== null && runEnd !== null && runEnd >= start) bits.push("took " + duration(runEnd - start));
      if (runTokens) bits.push(formatTokens(runTokens) + " tokens");
      facts.textContent = bits.join(" · ");
      facts.hidden = !bits.length;
    };
    for (const article of this.list.children) {
      if (article.tagName !== "ARTICLE") continue;
      const known = this.messages.get(article.dataset.id);
      if (!known) continue;
      const message = known.message;
      const meta = message.metadata && typeof message.metadata === "object" ? message.metadata : {};
      const role = message.role;
      const model = typeof meta.model === "string" ? meta.model : null;
      const at = article.dataset.at ? Number(article.dataset.at) : null;
      const head = article.querySelector(":scope > .msg-body > .msg-head");
      let turn = head.querySelector(".turn");
      if (!turn) {
        turn = el("span", "turn");
        head.append(turn);
      }
      turn.textContent = "";
      turn.hidden = true;
      const cont = role === "assistant" && prev !== null && prev.role === "assistant";
      article.classList.toggle("cont", cont);
      head.hidden = cont && (model === null || model === prev.model);
      if (!cont) {
        finish();
        first = role === "assistant" ? article : null;
        runEnd = null;
        runTokens = null;
        fileTimes = false;
        // A person's prompt starts the turn's clock; Claude Code's own doings (a command, its
        // output, a caveat) leave it as it is.
        if (role === "user" && !article.classList.contains("cc")) prompt = at;
        else if (role !== "assistant" && role !== "user") prompt = null;
      }
      if (meta.timestampFrom === "file") fileTimes = true;
      if (role === "assistant") {
        if (at !== null) runEnd = Math.max(runEnd ?? at, at);
        const tokens = usageTokens(meta);
        if (tokens !== null) runTokens = (runTokens || 0) + tokens;
      }
      const time = article.querySelector(":scope > .msg-gutter > time");
      if (time) {
        const stamp = Number(article.dataset.at);
        const base = cont && first && first.dataset.at ? Number(first.dataset.at) : null;
        // A log with no times is dated by its file: every message has that one time, so a
        // continuation says nothing rather than "+0 ms".
        const fromFile = meta.timestampFrom === "file";
        if (fromFile && base !== null) time.textContent = "";
        else time.textContent = base !== null && stamp >= base ? "+" + duration(stamp - base) : clockTime(stamp, dated);
        time.title = absoluteTime(stamp) + (fromFile ? " (the log has no times: its file's)" : "");
        dated = stamp;
      }
      prev = { role, model: model ?? (prev && cont ? prev.model : null), article };
    }
    finish();
    if (this.outline) thoughtRuns(this.list);
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
    this.regroup();
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
    this.regroup();
    this.afterDraw(message);
  }

  // Switch the outline on or off: every message drawn again, the one the reader is on kept in
  // place, open folds left open.
  setOutline(on) {
    if (on === this.outline || this.stopped) return;
    this.outline = on;
    this.list.classList.toggle("outline", on);
    const anchor = readingAnchor(this.list);
    const top = anchor ? anchor.getBoundingClientRect().top : 0;
    const focused = document.activeElement;
    for (const known of this.messages.values()) {
      const article = this.renderMessage(known.message);
      article.className = known.article.className;
      if (known.article.hasAttribute("tabindex")) article.tabIndex = -1;
      known.article.replaceWith(article);
      if (focused === known.article) article.focus({ preventScroll: true });
      known.article = article;
    }
    this.regroup();
    const now = anchor ? this.messages.get(anchor.dataset.id) : null;
    if (now) window.scrollBy(0, now.article.getBoundingClientRect().top - top);
  }

  redrawAll() {
    for (const { message } of [...this.messages.values()]) stick(() => this.upsert(message));
    this.placeOrphans();
  }

  loadOlder(limit = OLDER_PAGE) {
    if (!this.next) return Promise.resolve();
    if (this.loading) return this.loading;
    this.loading = this.readOlder(limit).finally(() => {
      this.loading = null;
      this.updateOlder();
    });
    return this.loading;
  }

  async readOlder(limit) {
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
      this.regroup();
      if (anchor) window.scrollBy(0, anchor.getBoundingClientRect().top - top);
      this.next = older.next;
      this.olderStatus.textContent = "";
      this.placeOrphans();
    } catch (error) {
      this.olderStatus.textContent = "Could not load older messages: " + error.message;
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

  // Forget every mark (a new search, or a find that was cleared).
  clearMarks() {
    for (const fold of this.folds.values()) {
      if (!fold.marks.length) continue;
      fold.marks = [];
      this.redrawPart(fold);
    }
    for (const child of this.children) child.clearMarks();
  }

  // Make no mark the current one, here and in every subagent read so far.
  dropCurrent() {
    for (const fold of this.folds.values()) {
      if (!fold.marks.some((m) => m.current)) continue;
      fold.marks = fold.marks.map((m) => ({ ...m, current: false }));
      this.redrawPart(fold);
    }
    for (const child of this.children) child.dropCurrent();
  }

  // Show one place: {call, message, part, field, start, end, hidden}. Reads older pages only
  // until the message is loaded, opens the part's fold, reads the slice around a match in a cut
  // middle, marks the match and scrolls to it. Returns the element shown (the current <mark>
  // when there is one), or throws an Error that says why the place cannot be shown.
  async reveal(target, { token = null } = {}) {
    const live = () => !this.stopped && (token === null || token.live);
    this.dropCurrent();
    if (target.call != null && target.call !== this.call) {
      const details = await this.subagentDetails(target.call, live);
      if (!details) throw new Error("that subagent is not in this transcript");
      for (let d = details; d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
      const child = await details.startChild();
      if (!live()) return null;
      if (target.message == null) {
        details.scrollIntoView({ block: "start" });
        return details.querySelector("summary");
      }
      return child.reveal({ ...target, call: child.call }, { token });
    }
    if (target.message == null) return null;
    while (!this.messages.has(target.message) && this.next && live()) {
      const before = this.next;
      await this.loadOlder(SEEK_PAGE);
      if (this.next === before) break; // the read failed: its note says why
    }
    if (!live()) return null;
    if (!this.messages.has(target.message)) throw new Error("that message is no longer in this transcript");
    const fold = this.folds.get(target.message + "/" + target.part);
    if (!fold || !fold.el || !fold.el.isConnected) throw new Error("that part is no longer in this message");
    const start = Number(target.start) || 0;
    let end = target.end != null ? Number(target.end) : null;
    if (fold.el.tagName === "DETAILS") fold.el.open = true;
    const cut = fold.cut && fold.cut.field === target.field && !fold.wholeFor() ? fold.cut : null;
    if (cut && !fold.shows(start, end ?? start + 1)) {
      await fold.window(Math.max(0, start - CONTEXT), (end ?? start) + CONTEXT).catch(() => {});
      if (!live()) return null;
    }
    if (end === null) end = start + wordLength(fold, target.field, start);
    fold.marks = [...fold.marks.filter((m) => !(m.field === target.field && m.start === start && m.end === end)), { field: target.field, start, end, current: true }];
    this.redrawPart(fold);
    const shown = (fold.el.querySelector("mark[data-current]") || fold.el);
    shown.scrollIntoView({ block: "center" });
    return shown;
  }

  // The subagent fold of `call`: older pages are read until its starting call is drawn (or
  // every page is loaded, when it is listed at the top).
  async subagentDetails(call, live) {
    if (!this.subagents.has(call)) return null;
    while (!this.seenCalls.has(call) && this.next && live()) {
      const before = this.next;
      await this.loadOlder(SEEK_PAGE);
      if (this.next === before) break;
    }
    this.placeOrphans();
    return this.subFolds.get(call) || null;
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
    let started = null;
    // The subagent's transcript, read once: when the fold opens, or when a search hit is in it.
    details.startChild = () => {
      if (started) return started;
      const child = new Transcript(body, {
        agent: this.agent,
        call,
        subagents: this.subagents,
        subagentFold: this.subagentFold,
      });
      this.children.push(child);
      started = child.start().then(
        () => child,
        (error) => {
          body.append(el("p", "error", "Could not read the subagent: " + error.message));
          throw error;
        },
      );
      return started;
    };
    details.addEventListener("toggle", () => {
      if (details.open) details.startChild().catch(() => {});
    });
    this.subFolds.set(call, details);
    return details;
  }
}

// The message a reader is on: the keyboard's, else the first whose bottom is below the sticky bars.
// Outline: the column a node of an assistant message takes (panel.css's grid): a closed thought
// 1, a closed answer 2, a closed call (and the subagent under it) 3; 0 for a row of its own.
function outlineColumn(node) {
  const c = node.classList;
  if (!c || !c.contains("fold") || node.open) return 0;
  if (c.contains("reasoning")) return 1;
  if (c.contains("prose")) return 2;
  if (c.contains("tool")) return 3;
  const call = node.previousElementSibling;
  return c.contains("subagent") && call && call.classList.contains("tool") && !call.open ? 3 : 0;
}

// Outline: a run of rows that start with a closed thought says "Thought" once, on its first row
// ("Thought ×3" for three); the others keep the label's place, hidden. The rows are found as the
// grid places them: each message starts a row, and a fold whose column is not right of the one
// before it starts the next.
function thoughtRuns(list) {
  let run = [];
  const end = () => {
    run.forEach((fold, i) => {
      const kind = fold.querySelector(":scope > summary > .kind");
      if (!kind) return;
      kind.classList.toggle("again", i > 0);
      kind.textContent = i === 0 && run.length > 1 ? `Thought ×${run.length}` : "Thought";
      if (i === 0 && run.length > 1) kind.title = `${run.length} thoughts in a row`;
      else kind.removeAttribute("title");
    });
    run = [];
  };
  for (const article of list.children) {
    if (article.tagName !== "ARTICLE" || !article.classList.contains("role-assistant")) {
      end();
      continue;
    }
    const body = article.querySelector(":scope > .msg-body");
    let column = 4; // a message starts a row
    for (const node of body ? body.children : []) {
      if (node.hidden) continue;
      const at = outlineColumn(node);
      if (at === 0) {
        end();
        column = 4;
        continue;
      }
      if (at <= column) {
        if (at === 1) run.push(node);
        else end();
      }
      column = at;
    }
  }
  end();
}

function readingAnchor(list) {
  const marked = list.querySelector(":scope > article.kbd-current");
  if (marked) return marked;
  const bars = [...document.querySelectorAll(".bar, .agent-head")].map((b) => b.getBoundingClientRect().bottom);
  const top = Math.max(0, ...bars);
  return [...list.children].find((a) => a.tagName === "ARTICLE" && a.getBoundingClientRect().bottom > top) || null;
}

// The length of the run of non-space text at code point `start` of a field: what an address
// (which names where a match starts, not where it ends) marks.
function wordLength(fold, field, start) {
  let text = null;
  let offset = 0;
  const whole = fold.wholeFor() || fold.part;
  if (fold.cut && fold.cut.field === field && !fold.wholeFor()) {
    const head = cpLength(fold.cut.head);
    const w = fold.windows.find((x) => x.start <= start && x.end > start);
    if (start < head) text = fold.cut.head;
    else if (w) [text, offset] = [w.text, w.start];
    else if (fold.length !== null && start >= fold.length - cpLength(fold.cut.tail)) [text, offset] = [fold.cut.tail, fold.length - cpLength(fold.cut.tail)];
  } else if (whole && whole[field] !== undefined) {
    text = fieldText(whole, field);
  }
  if (text === null) return 1;
  const rest = cpSlice(text, start - offset, start - offset + 80);
  const run = /^\S+/u.exec(rest);
  return run ? cpLength(run[0]) : 1;
}

// When a message was written: the source line's time the importers keep (metadata.timestamp),
// else the time the service first stored it (createdAt, from the read). Milliseconds, or null.
export function messageTime(message) {
  const meta = message.metadata && typeof message.metadata === "object" ? message.metadata : {};
  for (const stamp of [meta.timestamp, meta.createdAt, message.createdAt]) {
    if (typeof stamp !== "string" && typeof stamp !== "number") continue;
    const at = typeof stamp === "number" ? stamp : Date.parse(stamp);
    if (Number.isFinite(at)) return at;
  }
  return null;
}

// Tokens a message's metadata reports (AI SDK `usage`/`totalUsage`, or the providers' own names).
function usageTokens(meta) {
  const usage = [meta.usage, meta.totalUsage].find((u) => u && typeof u === "object");
  if (!usage) return null;
  if (typeof usage.totalTokens === "number") return usage.totalTokens;
  let n = 0;
  let any = false;
  for (const key of ["inputTokens", "outputTokens", "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"]) {
    if (typeof usage[key] === "number") {
      n += usage[key];
      any = true;
    }
  }
  return any ? n : null;
}

function hasPendingTool(message) {
  const parts = Array.isArray(message.parts) ? message.parts : [];
  return parts.some((p) => p && (p.state === "input-available" || p.state === "input-streaming") && typeof p.type === "string" && (p.type.startsWith("tool-") || p.type === "dynamic-tool"));
}

export async function agentInfo(agent) {
  return getJson(agentPath(agent));
}
