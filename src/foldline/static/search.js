// Search: the search box (`/` or Ctrl/Cmd-K) over every transcript the reader can see, and the
// "find in this transcript" field of one agent. Both ask the server (`GET /api/search`), so they
// see what the cut hides. Snippets are plain text drawn as text nodes; the match is a <mark>.

import { search } from "./api.js";
import { stripAnsi } from "./ansi.js";
import { cpIndex } from "./marks.js";
import { dropControls, plainText } from "./markdown.js";
import { el } from "./dom.js";

export const DEBOUNCE = 150;
const PAGE = 20;
const FIND_PAGE = 100;

const ROLES = { user: "User", assistant: "Assistant", system: "System" };
const FIELDS = { text: "text", output: "output", errorText: "error", input: "input" };

// A result (one field of one part) as one hit per match: each with the result's place and its
// own start, end and hidden (what find steps through, and a result's next/previous).
export function eachMatch(result) {
  const matches = Array.isArray(result.matches) && result.matches.length ? result.matches : [result];
  return matches.map((m) => ({ ...result, start: m.start, end: m.end, hidden: Boolean(m.hidden) }));
}

// "17 matches in this output" (null for one match).
export function countText(result) {
  const n = Number(result.count) || 1;
  if (n < 2 && !result.more) return null;
  return `${n}${result.more ? "+" : ""} matches in this ${FIELDS[result.field] || String(result.field)}`;
}

// Hits until `want` are in hand or the search is done. The server answers within about a
// second: a page it ended early for time (`partial`) is followed at once, and `progress` is
// told how many hits are in hand while it goes on.
export async function gather(params, want, { signal, progress } = {}) {
  const hits = [];
  let cursor = params.cursor ?? null;
  for (;;) {
    const answer = await search({ ...params, limit: want - hits.length, cursor }, { signal });
    hits.push(...answer.hits);
    cursor = answer.next;
    if (!answer.partial || !cursor || hits.length >= want) return { hits, next: cursor };
    if (progress) progress(hits.length);
  }
}

function clean(text) {
  return dropControls(stripAnsi(text)).replace(/\s+/g, " ");
}

// The snippet of a result: the text around its first match, each match it shows in a <mark>.
export function snippetNode(hit) {
  const node = el("div", "hit-snippet");
  const snippet = hit.snippet && typeof hit.snippet.text === "string" ? hit.snippet : { text: "", start: 0, end: 0 };
  const text = snippet.text;
  const spans = (Array.isArray(snippet.matches) && snippet.matches.length ? snippet.matches : [snippet])
    .map((m) => [cpIndex(text, Number(m.start) || 0), cpIndex(text, Number(m.end) || 0)]);
  let at = 0;
  for (const [a, b] of spans) {
    if (a < at) continue;
    const piece = clean(text.slice(at, a));
    node.append(document.createTextNode(at === 0 ? (hit.start - snippet.start > 0 ? "…" : "") + piece.trimStart() : piece));
    node.append(el("mark", "hit", clean(text.slice(a, b))));
    at = b;
  }
  node.append(document.createTextNode(clean(text.slice(at)).trimEnd()));
  return node;
}

// Where a hit is, in words: "Assistant · Bash · output · cut middle".
export function hitWhere(hit) {
  const bits = [ROLES[hit.role] || String(hit.role || "")];
  if (hit.call != null) bits.push("subagent");
  if (hit.tool) bits.push(String(hit.tool));
  bits.push(FIELDS[hit.field] || String(hit.field));
  if (hit.hidden) bits.push("in the cut middle");
  return bits.filter(Boolean).join(" · ");
}

function titleText(title) {
  return (title && plainText(title)) || "Untitled agent";
}

let ids = 0;
const uid = (prefix) => `${prefix}-${(ids += 1)}`;

// The search box: a modal dialog holding a combobox (the input) and its listbox of results,
// grouped by agent. `onOpen(hit)` shows a hit.
export class SearchBox {
  constructor({ onOpen }) {
    this.onOpen = onOpen;
    this.dialog = el("dialog", "search-dialog");
    this.dialog.id = "search";
    const labelId = uid("search-label");
    this.dialog.setAttribute("aria-labelledby", labelId);
    const label = el("label", "search-label", "Search transcripts");
    label.id = labelId;
    this.input = el("input", "search-input");
    this.input.id = uid("search-input");
    label.htmlFor = this.input.id;
    Object.assign(this.input, { type: "text", autocomplete: "off", spellcheck: false });
    this.list = el("div", "search-results");
    this.list.id = uid("search-results");
    this.list.setAttribute("role", "listbox");
    this.list.setAttribute("aria-label", "Results");
    this.input.setAttribute("role", "combobox");
    this.input.setAttribute("aria-autocomplete", "list");
    this.input.setAttribute("aria-controls", this.list.id);
    this.input.setAttribute("aria-expanded", "false");
    this.status = el("p", "search-status muted");
    this.status.setAttribute("role", "status");
    const help = el("p", "search-help muted", "↑ ↓ to move · Enter to open · Esc to close");
    const box = el("div", "search-box");
    box.append(label, this.input, this.status, this.list, help);
    this.dialog.append(box);
    document.body.append(this.dialog);

    this.hits = [];
    this.next = null;
    this.query = "";
    this.generation = 0;
    this.controller = null;
    this.timer = null;
    this.active = -1;
    this.groups = new Map();
    this.places = new Map(); // one option per field of a part: {first hit, count, where line}
    this.returnFocus = null;

    this.input.addEventListener("input", () => this.schedule());
    this.input.addEventListener("keydown", (event) => this.key(event));
    this.dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      this.close();
    });
    this.dialog.addEventListener("click", (event) => {
      if (event.target === this.dialog) this.close(); // a click on the backdrop
    });
    this.list.addEventListener("mousedown", (event) => event.preventDefault()); // focus stays in the input
    this.list.addEventListener("click", (event) => {
      const option = event.target.closest("[role=option]");
      if (option) this.activate(this.options().indexOf(option));
    });
  }

  get isOpen() {
    return this.dialog.open;
  }

  open() {
    if (!this.dialog.open) {
      this.returnFocus = document.activeElement;
      this.dialog.showModal();
    }
    this.input.focus();
    this.input.select();
  }

  close({ restore = true } = {}) {
    if (!this.dialog.open) return;
    this.dialog.close();
    clearTimeout(this.timer);
    if (restore && this.returnFocus && this.returnFocus.isConnected) this.returnFocus.focus();
    this.returnFocus = null;
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), DEBOUNCE);
  }

  async run({ more = false } = {}) {
    const q = this.input.value;
    const generation = (this.generation += 1);
    if (this.controller) this.controller.abort();
    this.controller = null;
    if (!q.trim()) {
      this.reset();
      this.status.textContent = "";
      return;
    }
    const controller = new AbortController();
    this.controller = controller;
    this.status.textContent = more ? "Loading more…" : "Searching…";
    let answer;
    try {
      const progress = (n) => {
        if (generation === this.generation) this.status.textContent = `Searching… ${n} so far`;
      };
      answer = await gather({ q, cursor: more ? this.next : null }, PAGE, { signal: controller.signal, progress });
    } catch (error) {
      if (generation !== this.generation || error.name === "AbortError") return;
      this.status.textContent = "Search failed: " + error.message;
      return;
    }
    if (generation !== this.generation) return; // a newer search is under way: this one is stale
    this.controller = null;
    if (!more) this.reset();
    this.query = q;
    const first = this.hits.length;
    this.hits.push(...answer.hits);
    this.next = answer.next;
    this.draw(first);
    const shown = [...this.places.values()].map((place) => this.hits[place.first]); // a result each
    const n = shown.reduce((sum, hit) => sum + (Number(hit.count) || 1), 0);
    const plus = this.next || shown.some((hit) => hit.more) ? "+" : "";
    const places = this.places.size;
    const where = places === n ? "" : ` in ${places} place${places === 1 ? "" : "s"}`; // said when places hold several
    this.status.textContent = n === 0 ? "No matches" : `${n}${plus} match${n === 1 && !plus ? "" : "es"}${where}`;
  }

  reset() {
    this.hits = [];
    this.next = null;
    this.groups = new Map();
    this.places = new Map();
    this.list.replaceChildren();
    this.setActive(-1);
    this.input.setAttribute("aria-expanded", "false");
  }

  // Draw hits from `first` on into their agents' groups (in order of first appearance).
  draw(first) {
    const more = this.list.querySelector(".more-option");
    if (more) more.remove();
    for (let i = first; i < this.hits.length; i += 1) {
      const hit = this.hits[i];
      let group = this.groups.get(hit.agent_id);
      if (!group) {
        group = el("div", "search-group");
        group.setAttribute("role", "group");
        const heading = el("div", "group-title", titleText(hit.title));
        heading.id = uid("search-group");
        group.setAttribute("aria-labelledby", heading.id);
        group.dataset.agent = hit.agent_id;
        group.append(heading);
        this.groups.set(hit.agent_id, group);
        this.list.append(group);
      }
      // One option per field of a part: a result, or one that goes on from the page before.
      const place = [hit.call, hit.message_id, hit.part, hit.field].join(" ");
      const same = this.places.get(hit.agent_id + " " + place);
      if (same) {
        const kept = this.hits[same.first];
        this.hits[same.first] = { ...kept, count: (Number(kept.count) || 1) + (Number(hit.count) || 1),
          more: Boolean(hit.more), matches: [...(kept.matches || []), ...(hit.matches || [])] };
        same.where.textContent = [hitWhere(kept), countText(this.hits[same.first])].filter(Boolean).join(" · ");
        continue;
      }
      const option = el("div", "hit-option");
      option.id = uid("search-hit");
      option.setAttribute("role", "option");
      option.setAttribute("aria-selected", "false");
      option.dataset.hit = String(i);
      const where = el("div", "hit-where", [hitWhere(hit), countText(hit)].filter(Boolean).join(" · "));
      option.append(where, snippetNode(hit));
      group.append(option);
      this.places.set(hit.agent_id + " " + place, { first: i, count: 1, where });
    }
    if (this.next) {
      const option = el("div", "hit-option more-option", "Show more results");
      option.id = uid("search-more");
      option.setAttribute("role", "option");
      option.setAttribute("aria-selected", "false");
      this.list.append(option);
    }
    const any = this.hits.length > 0;
    this.input.setAttribute("aria-expanded", any ? "true" : "false");
    if (any && this.active < 0) this.setActive(0);
    else this.setActive(this.active);
  }

  options() {
    return [...this.list.querySelectorAll("[role=option]")];
  }

  setActive(index) {
    const options = this.options();
    this.active = options.length ? Math.max(-1, Math.min(index, options.length - 1)) : -1;
    options.forEach((o, i) => o.setAttribute("aria-selected", i === this.active ? "true" : "false"));
    const current = options[this.active];
    if (current) {
      this.input.setAttribute("aria-activedescendant", current.id);
      current.scrollIntoView({ block: "nearest" });
    } else this.input.removeAttribute("aria-activedescendant");
  }

  key(event) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const n = this.options().length;
      if (!n) return;
      this.setActive(event.key === "ArrowDown" ? Math.min(n - 1, this.active + 1) : Math.max(0, this.active - 1));
    } else if (event.key === "Enter") {
      event.preventDefault();
      if (this.timer && this.input.value !== this.query) {
        clearTimeout(this.timer); // typed and pressed Enter at once: search first
        this.run().then(() => this.activate(0));
        return;
      }
      this.activate(this.active < 0 ? 0 : this.active);
    } else if (event.key === "Escape") {
      event.preventDefault();
      this.close();
    }
  }

  activate(index) {
    const option = this.options()[index];
    if (!option) return;
    if (option.classList.contains("more-option")) {
      const keep = index;
      this.run({ more: true }).then(() => this.setActive(keep));
      return;
    }
    const hit = this.hits[Number(option.dataset.hit)];
    this.close({ restore: false });
    this.onOpen(hit);
  }
}

// "Find in this transcript": the same search narrowed to one agent (and its subagents), with a
// count and next/previous. Each step shows its hit as opening a search hit does.
export class FindBar {
  constructor({ agent, show, clear }) {
    this.agent = agent;
    this.show = show; // (hit) → Promise: shows the hit (and says why when it cannot)
    this.clear = clear; // () → drops the marks of the last find
    this.node = el("form", "find");
    this.node.setAttribute("role", "search");
    this.node.addEventListener("submit", (event) => event.preventDefault());
    const label = el("label", "find-label", "Find in this transcript");
    this.input = el("input", "find-input");
    this.input.id = uid("find-input");
    label.htmlFor = this.input.id;
    Object.assign(this.input, { type: "text", autocomplete: "off", spellcheck: false });
    this.input.setAttribute("aria-describedby", uid("find-count"));
    this.count = el("span", "find-count muted");
    this.count.id = this.input.getAttribute("aria-describedby");
    this.count.setAttribute("role", "status");
    this.prev = el("button", "find-prev", "Previous");
    this.prev.type = "button";
    this.prev.title = "Previous match (Shift+Enter)";
    this.nextButton = el("button", "find-next", "Next");
    this.nextButton.type = "button";
    this.nextButton.title = "Next match (Enter)";
    this.note = el("span", "find-note muted");
    this.node.append(label, this.input, this.count, this.prev, this.nextButton, this.note);

    this.hits = [];
    this.next = null;
    this.index = -1;
    this.query = "";
    this.generation = 0;
    this.controller = null;
    this.timer = null;
    this.searching = null;
    this.updateButtons();

    this.input.addEventListener("input", () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        this.timer = null;
        this.run().catch(() => {});
      }, DEBOUNCE);
    });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        this.step(event.shiftKey ? -1 : 1);
      } else if (event.key === "Escape" && this.input.value) {
        event.preventDefault();
        this.input.value = "";
        this.run().catch(() => {});
      }
    });
    this.prev.addEventListener("click", () => this.step(-1));
    this.nextButton.addEventListener("click", () => this.step(1));
  }

  // Search for what the field holds and show the first (newest) hit.
  run() {
    clearTimeout(this.timer);
    this.timer = null;
    const q = this.input.value;
    const generation = (this.generation += 1);
    if (this.controller) this.controller.abort();
    this.controller = null;
    this.clear();
    this.hits = [];
    this.next = null;
    this.index = -1;
    this.query = q;
    this.note.textContent = "";
    if (!q.trim()) {
      this.count.textContent = "";
      this.updateButtons();
      this.searching = null;
      return Promise.resolve();
    }
    const controller = new AbortController();
    this.controller = controller;
    this.count.textContent = "Searching…";
    const progress = (n) => {
      if (generation === this.generation) this.count.textContent = `Searching… ${n} so far`;
    };
    this.searching = gather({ q, agent: this.agent }, FIND_PAGE, { signal: controller.signal, progress }).then(
      async (answer) => {
        if (generation !== this.generation) return;
        this.controller = null;
        this.searching = null;
        this.hits = answer.hits.flatMap(eachMatch);
        this.next = answer.next;
        if (!this.hits.length) {
          this.count.textContent = "No matches";
          this.updateButtons();
          return;
        }
        await this.go(0);
      },
      (error) => {
        if (generation !== this.generation || error.name === "AbortError") return;
        this.searching = null;
        this.count.textContent = "Find failed: " + error.message;
        this.updateButtons();
      },
    );
    return this.searching;
  }

  updateButtons() {
    const none = this.hits.length === 0;
    this.prev.disabled = none;
    this.nextButton.disabled = none;
  }

  countText() {
    return `${this.index + 1} of ${this.hits.length}${this.next ? "+" : ""}`;
  }

  async step(delta) {
    if (this.timer || this.input.value !== this.query) {
      await this.run(); // Enter right after typing: search now; it shows the first hit
      return;
    }
    if (this.searching) {
      await this.searching; // its answer shows the first match: that is this step
      return;
    }
    if (!this.hits.length) return;
    let i = this.index + delta;
    if (i >= this.hits.length && this.next) {
      const generation = this.generation;
      const answer = await gather({ q: this.query, agent: this.agent, cursor: this.next }, FIND_PAGE).catch((error) => {
        this.note.textContent = "Could not read more matches: " + error.message;
        return null;
      });
      if (generation !== this.generation) return;
      if (answer) {
        this.hits.push(...answer.hits.flatMap(eachMatch));
        this.next = answer.next;
      }
    }
    if (i >= this.hits.length) i = 0;
    if (i < 0) i = this.hits.length - 1;
    await this.go(i);
  }

  async go(i) {
    this.index = i;
    this.count.textContent = this.countText();
    this.updateButtons();
    this.note.textContent = "";
    // A place that cannot be shown says why above the transcript; the count stays, so the next
    // step goes on from it.
    await this.show(this.hits[i]).catch(() => {});
  }
}

// Next/previous through the matches of one result, once it is opened in its transcript:
// "3 of 17 matches in this output". `show(hit)` shows one match.
export class MatchSteps {
  constructor({ show }) {
    this.show = show;
    this.node = el("div", "match-steps");
    this.node.setAttribute("role", "group");
    this.node.setAttribute("aria-label", "Matches in this place");
    this.count = el("span", "match-count muted");
    this.count.setAttribute("role", "status");
    this.prev = el("button", "match-prev", "Match before");
    this.prev.type = "button";
    this.nextButton = el("button", "match-next", "Match after");
    this.nextButton.type = "button";
    this.node.append(this.count, this.prev, this.nextButton);
    this.prev.addEventListener("click", () => this.step(-1));
    this.nextButton.addEventListener("click", () => this.step(1));
    this.set(null);
  }

  // The result just opened (or null): its matches, the first one shown.
  set(result, at = 0) {
    this.result = result;
    this.hits = result ? eachMatch(result) : [];
    this.index = Math.max(0, Math.min(at, this.hits.length - 1));
    this.node.hidden = this.hits.length < 2;
    this.update();
  }

  update() {
    if (this.hits.length < 2) return;
    const words = countText(this.result) || "";
    this.count.textContent = `${this.index + 1} of ${words}`;
  }

  async step(delta) {
    if (this.hits.length < 2) return;
    this.index = (this.index + delta + this.hits.length) % this.hits.length;
    this.update();
    await this.show(this.hits[this.index]).catch(() => {});
  }
}
