// Drawing one part. Every part is one element with data-message (the message id) and data-part
// (its stored index); reasoning, tool calls and anything not shown inline are <details> folds.
// Text from the transcript only ever reaches the page through textContent or text nodes.

import { renderAnsi } from "./ansi.js";
import { changeLines, diffNode } from "./diff.js";
import { cpLength, cpSlice, markSource } from "./marks.js";
import { el } from "./dom.js";
import { exitFacts, shortInput, toolDuration, toolName, toolState } from "./tools.js";
import { duration, formatBytes, formatCount } from "./format.js";
import { plainText, renderMarkdown, safeHref } from "./markdown.js";
import { highlightLater, pathLanguage } from "./highlight.js";

// An output as text: the string, or 2-space indented JSON (the same text the cut measures).
export function outputText(value) {
  if (typeof value === "string") return value;
  const json = JSON.stringify(value, null, 2);
  return json === undefined ? String(value) : json;
}

function copyButton(getText, label = "Copy") {
  const button = el("button", "copy", label);
  button.type = "button";
  button.addEventListener("click", async (event) => {
    event.preventDefault();
    event.stopPropagation();
    try {
      const text = await getText();
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed";
    }
    setTimeout(() => (button.textContent = label), 1500);
  });
  return button;
}

// A field's head: its label, and a button that copies `getText()`'s text.
function fieldHead(label, getText) {
  const head = el("div", "field-head");
  head.append(el("span", "label", label), copyButton(getText));
  return head;
}

function pre(text, className = "out") {
  const node = el("pre", className);
  renderAnsi(node, text);
  node.tabIndex = 0; // it may scroll: the keyboard can reach it and scroll it
  return node;
}

// The marks a fold holds for one field: [{field, start, end, current}] in code points.
function marksFor(fold, field) {
  return fold && Array.isArray(fold.marks) ? fold.marks.filter((m) => m.field === field) : [];
}

// Mark, in `node` (which draws `source`, the field's code points from `offset` on), each of the
// fold's marks on `field` that falls there.
export function applyMarks(node, fold, field, source, offset) {
  if (offset === null) return node;
  for (const m of marksFor(fold, field)) {
    const mark = markSource(node, source, offset, m.start, m.end, m.current ? "hit current" : "hit");
    if (mark && m.current) {
      mark.tabIndex = -1;
      mark.dataset.current = "";
    }
  }
  return node;
}

function actionButton(text, className, onClick, disabled = false) {
  const b = el("button", className, text);
  b.type = "button";
  b.disabled = disabled;
  b.addEventListener("click", onClick);
  return b;
}

// The section of a fold that holds the field that may be cut: whole, or its head, the windows
// read around matches or on request, the marks between what is shown, and its tail.
// `fold` is the part's fold state (see transcript.js): {cut, whole, status, error, read(),
// big, windows, length, slicing, sliceError, more(), marks, fieldText()}.
export function fieldSection(fold, label, wholeText, kind, field, lang = null) {
  const section = el("section", "field");
  section.dataset.field = field;
  const thought = kind === "thought";
  section.append(fieldHead(label, async () => (wholeText !== null ? wholeText : fold.fieldText())));
  const draw = (text, offset, end = "") => {
    const node = thought ? thoughtText(text, end) : pre(text, "out" + (end ? " " + end : ""));
    if (lang && !thought) highlightLater(node, lang, "file"); // coloured once on screen
    if (offset !== null) node.dataset.start = String(offset);
    return applyMarks(node, fold, field, text, offset);
  };
  if (wholeText !== null) {
    section.append(draw(wholeText, 0));
    return section;
  }
  const cut = fold.cut;
  section.classList.add("is-cut");
  const headLength = cpLength(cut.head);
  const tailLength = cpLength(cut.tail);
  const length = typeof fold.length === "number" ? fold.length : null;
  const middleEnd = length === null ? null : Math.max(headLength, length - tailLength);
  // The pieces shown, in order: a piece that meets the one before it joins it (one text, no
  // added break); between the others, a mark for what is not shown.
  const items = [];
  const add = (text, start, kind) => {
    const last = items[items.length - 1];
    if (last && last.text !== undefined && start !== null && last.start + cpLength(last.text) === start) {
      last.text += text;
      last.kinds.push(kind);
    } else items.push({ text, start, kinds: [kind] });
  };
  add(cut.head, 0, "head");
  let shownTo = headLength;
  for (const w of fold.windows || []) {
    const a = Math.max(w.start, shownTo);
    const b = middleEnd === null ? w.end : Math.min(w.end, middleEnd);
    if (b <= a) continue;
    if (a > shownTo) items.push({ from: shownTo, to: a });
    add(cpSlice(w.text, a - w.start, b - w.start), a, "window");
    shownTo = b;
  }
  if (middleEnd === null || shownTo < middleEnd) items.push({ from: shownTo, to: middleEnd });
  add(cut.tail, middleEnd, "tail");
  items.forEach((item, n) => {
    if (item.text === undefined) {
      section.append(gapMark(fold, cut, thought, item.from, item.to, headLength));
      return;
    }
    const node = draw(item.text, item.start, item.kinds.join(" "));
    if (!thought) halfLines(node, item.text, n > 0, n < items.length - 1);
    section.append(node);
  });
  return section;
}

// A piece of a cut field that begins (after a gap) or ends (before one) inside a line says so
// there, with a dimmed "…" that is not part of the text (copy and marks leave it out). The
// character before a piece is not known: one is taken to start a line only when it is the head.
function halfLines(node, text, gapBefore, gapAfter) {
  if (gapBefore && text && !text.startsWith("\n")) node.prepend(halfMark("the line begins before this"));
  if (gapAfter && text && !text.endsWith("\n")) node.append(halfMark("the line goes on"));
}

function halfMark(title) {
  const mark = el("span", "half-line", "…");
  mark.title = title;
  return mark;
}

// The striped mark for code points [from, to) of a cut field that are not shown (`to` is null
// while the field's length is not known yet).
function gapMark(fold, cut, thought, from, to, headLength) {
  const what = thought ? "thought" : "output";
  const mark = el("div", "cut-mark");
  mark.setAttribute("role", "status");
  mark.dataset.from = String(from);
  if (to !== null) mark.dataset.to = String(to);
  if (fold.status === "reading") {
    mark.classList.add("reading");
    mark.append(el("span", "", thought ? "Reading the whole thought…" : "Reading the whole output…"));
    return mark;
  }
  const whole = from === headLength && (to === null || to === fold.length - cpLength(cut.tail));
  if (fold.status === "failed") {
    mark.classList.add("failed");
    const hidden = Math.max(0, cut.bytes - new TextEncoder().encode(cut.head + cut.tail).length);
    mark.append(el("span", "", `The middle (${formatBytes(hidden)} of ${formatBytes(cut.bytes)}) was not read: ${fold.error}. `));
    mark.append(actionButton("Retry", "retry", () => fold.read({ user: true }).catch(() => {})));
    return mark;
  }
  if (whole) {
    const hidden = Math.max(0, cut.bytes - new TextEncoder().encode(cut.head + cut.tail).length);
    mark.append(el("span", "", `⋯ ${formatBytes(hidden)} in the middle not shown · ${formatBytes(cut.bytes)} in all ⋯ `));
  } else {
    const n = to === null ? null : to - from;
    mark.append(el("span", "", n === null ? "⋯ more not shown ⋯ " : `⋯ ${formatCount(n)} characters not shown ⋯ `));
  }
  const busy = fold.slicing === "reading";
  if (fold.big) {
    if (to !== null && (fold.windows || []).length) {
      mark.append(actionButton("Show the previous 64 KB", "more-before", () => fold.more(from, to, "before").catch(() => {}), busy));
    }
    mark.append(actionButton("Show the next 64 KB", "more", () => fold.more(from, to, "after").catch(() => {}), busy));
  } else {
    mark.append(actionButton(`Read the whole ${what}`, "read", () => fold.read({ user: true }).catch(() => {})));
  }
  if (busy) {
    mark.classList.add("reading");
    mark.append(el("span", "", "Reading…"));
  } else if (fold.slicing === "failed") {
    mark.classList.add("failed");
    mark.append(el("span", "", "Not read: " + fold.sliceError));
  }
  return mark;
}

// A thought is Markdown (Codex summaries are `**Title**` and paragraphs), drawn as DOM nodes.
function thoughtText(text, end = "") {
  const node = el("div", "thought-text" + (end ? " " + end : ""));
  node.append(renderMarkdown(text));
  return node;
}

export function fieldText(part, field) {
  const value = part[field];
  return field === "text" ? String(value ?? "") : outputText(value);
}

// `shown`: what the block draws, when not the JSON its Copy gives.
function jsonBlock(label, value, shown = null) {
  const section = el("section", "field");
  const text = outputText(value);
  section.append(fieldHead(label, async () => text), pre(shown ?? text, "out json"));
  return section;
}

// A value as 2-space indented JSON (compact: on one line), except that a string's line breaks
// are drawn as line breaks, not as \n: a raw line break cannot be in JSON, so inside its quotes it
// can only be a \n, and every other character is escaped as JSON escapes it (quotes included),
// so the structure stays unambiguous. For reading; Copy gives the JSON.
export function readableJson(value, compact = false, indent = "") {
  if (typeof value === "string") return '"' + value.split("\n").map((line) => JSON.stringify(line).slice(1, -1)).join("\n") + '"';
  if (value === null || typeof value !== "object") {
    const json = JSON.stringify(value);
    return json === undefined ? String(value) : json;
  }
  const inner = compact ? "" : indent + "  ";
  const items = Array.isArray(value)
    ? value.map((item) => readableJson(item === undefined ? null : item, compact, inner))
    : Object.entries(value).filter(([, item]) => item !== undefined)
      .map(([key, item]) => JSON.stringify(key) + (compact ? ":" : ": ") + readableJson(item, compact, inner));
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  if (!items.length) return open + close;
  if (compact) return open + items.join(",") + close;
  return open + "\n" + items.map((item) => inner + item).join(",\n") + "\n" + indent + close;
}

// A tool's input: an object is a small key/value view whose string values keep their real line
// breaks; anything else, and a value inside it that is not a string, is JSON whose strings show
// their line breaks (readableJson). Copy gives the JSON.
// The language of the file a call reads or writes (Read, Edit, Write, and the other agents'
// file tools: a name about files and a path in the input), from its extension; else null.
const FILE_TOOL = /read|edit|write|view|file|create|str_replace|patch/i;
const PATH_KEYS = ["file_path", "path", "filePath", "filename", "file", "target_file", "notebook_path"];
const CODE_KEYS = new Set(["content", "old_string", "new_string", "old_str", "new_str", "file_text", "code"]);

export function fileLanguage(name, input) {
  if (!FILE_TOOL.test(name) || !input || typeof input !== "object") return null;
  const key = PATH_KEYS.find((k) => typeof input[k] === "string");
  return key ? pathLanguage(input[key]) : null;
}

function inputBlock(value, state, lang = null) {
  const object = value !== null && typeof value === "object" && !Array.isArray(value);
  if (!object && typeof value !== "string") {
    const block = jsonBlock("Input", value, readableJson(value));
    block.dataset.field = "input";
    return applyMarks(block.querySelector("pre"), state, "input", outputText(value), 0) && block;
  }
  const section = el("section", "field input");
  section.dataset.field = "input";
  const json = outputText(value);
  section.append(fieldHead("Input", async () => json));
  if (typeof value === "string") {
    section.append(applyMarks(pre(value, "out input-text"), state, "input", value, 0));
    return section;
  }
  const list = el("dl", "kv");
  for (const [key, item] of Object.entries(value)) {
    list.append(el("dt", "", key));
    const dd = el("dd");
    if (typeof item === "string") {
      const node = pre(item, "out kv-text");
      if (lang && CODE_KEYS.has(key)) highlightLater(node, lang);
      dd.append(node);
    }
    else {
      const compact = readableJson(item, true);
      const text = compact.length <= 100 && !compact.includes("\n") ? compact : readableJson(item);
      dd.append(pre(text, "out kv-json"));
    }
    list.append(dd);
  }
  if (!list.childElementCount) list.append(el("dd", "muted", "(empty)"));
  section.append(applyMarks(list, state, "input", json, 0));
  return section;
}

// A transcript's first view draws its closed folds without their bodies (a thought's Markdown, a
// call's input, diff and output: most of the work, none of it on screen) and builds them right
// after that view is painted (Transcript.buildWaiting), or at once if one is opened first.
let waiting = null; // the bodies left for later while a first view is drawn, else null

// Run `draw` with the bodies of the folds it makes left for later; returns those bodies.
export function drawLater(draw) {
  waiting = [];
  try {
    draw();
    return waiting;
  } finally {
    waiting = null;
  }
}

function lazyBody(body, build) {
  if (waiting === null) build();
  else {
    body.build = build;
    waiting.push(body);
  }
  return body;
}

// Build a fold's body if it was left for later (a body no longer on the page is left alone).
export function buildBody(body) {
  const build = body && body.build;
  if (!build) return;
  body.build = null;
  if (body.isConnected) build();
}

function summary(...children) {
  const s = el("summary");
  s.append(...children);
  return s;
}

function fold(className, msgId, index) {
  const details = el("details", "fold " + className);
  details.dataset.message = msgId;
  details.dataset.part = String(index);
  return details;
}

function sizeNote(cut, wholeText, from = 2000) {
  if (cut) return el("span", "size cut", formatBytes(cut.bytes) + " · cut");
  if (wholeText !== null && wholeText.length > from) return el("span", "size", formatBytes(new TextEncoder().encode(wholeText).length));
  return null;
}

function reasoningFold(msgId, index, part, state) {
  const details = fold("reasoning", msgId, index);
  const whole = state.wholeFor(part);
  const text = whole ? String(whole.text ?? "") : state.cut ? null : String(part.text ?? "");
  const preview = plainText((text ?? state.cut.head).slice(0, 400));
  const bits = [el("span", "kind", "Thought"), el("span", "preview", preview.slice(0, 120))];
  const size = sizeNote(whole ? null : state.cut, text);
  if (size) bits.push(size);
  if (part.state === "streaming") bits.push(el("span", "badge streaming", "thinking…"));
  details.append(summary(...bits));
  const body = el("div", "fold-body");
  lazyBody(body, () => body.append(fieldSection(state, "Thought", text, "thought", "text")));
  details.append(body);
  return details;
}

// A text part past the text bound (a pasted log, say) arrives cut: a fold with both ends, the
// size, and its middle read on a click (by slices past 1 MB), drawn as text rather than Markdown.
function longTextFold(msgId, index, part, state) {
  const details = fold("long-text", msgId, index);
  const whole = state.wholeFor(part);
  const text = whole ? String(whole.text ?? "") : null;
  const preview = plainText((text ?? state.cut.head).slice(0, 400));
  const bits = [el("span", "kind", "Long text"), el("span", "preview", preview.slice(0, 120))];
  const size = sizeNote(whole ? null : state.cut, text);
  if (size) bits.push(size);
  details.append(summary(...bits));
  const body = el("div", "fold-body");
  body.append(fieldSection(state, "Text", text, "output", "text"));
  details.append(body);
  return details;
}

// Outline: an assistant's text is a one-line fold too (its first words and how many lines it
// has); its Markdown is drawn inside, at a readable measure, once it opens.
function proseFold(msgId, index, part, state) {
  const details = fold("prose", msgId, index);
  details.dataset.field = "text";
  const text = String(part.text ?? "");
  const bits = [el("span", "preview", plainText(text.slice(0, 400)).slice(0, 240))];
  const lines = text.trim().split("\n").length;
  if (lines > 1) bits.push(el("span", "size", `${formatCount(lines)} lines`));
  if (part.state === "streaming") bits.push(el("span", "badge streaming", "writing…"));
  details.append(summary(...bits));
  const body = el("div", "fold-body");
  lazyBody(body, () => body.append(applyMarks(renderMarkdown(text), state, "text", text, 0)));
  details.append(body);
  return details;
}

function toolFold(msgId, index, part, state, ctx) {
  const name = toolName(part);
  const details = fold("tool", msgId, index);
  details.dataset.state = String(part.state ?? "");
  details.dataset.tool = name;
  const whole = state.wholeFor(part) || part;
  const [shown, label] = toolState(part, ctx.isLast(msgId));
  details.dataset.shown = shown;
  // Its columns: name, input, the exit facts, then the state, size and run time, each of a fixed
  // width (an empty one when not known), so they line up from row to row.
  const title = el("span", "tool-name", name);
  title.title = name;
  const bits = [
    title,
    el("span", "tool-input", shortInput(part.input, name)),
    ...exitFacts(part).map((fact) => el("span", "badge exit", fact)),
    stateBadge(shown, label),
  ];
  const cut = state.wholeFor(part) ? null : state.cut;
  bits.push(sizeNote(cut, whole.output !== undefined ? outputText(whole.output) : null, 0) || el("span", "size"));
  const took = toolDuration(part);
  const node = el("span", "took", took === null ? "" : duration(took));
  if (took !== null) node.title = "ran for " + duration(took);
  bits.push(node);
  details.append(summary(...bits));
  const body = el("div", "fold-body");
  lazyBody(body, () => {
    const lang = fileLanguage(name, part.input);
    const change = changeLines(name, part.input, part.toolMetadata);
    if (change) body.append(changeSection(change, lang));
    if (part.input !== undefined) body.append(inputBlock(part.input, state, lang));
    if (part.approval && typeof part.approval === "object") body.append(jsonBlock("Approval", part.approval));
    for (const [field, label] of [["output", "Output"], ["errorText", "Error"]]) {
      const code = field === "output" ? lang : null;
      if (cut && cut.field === field) body.append(fieldSection(state, label, null, "output", field, code));
      else if (field === "output" && hasMedia(whole.output) && !marksFor(state, "output").length) body.append(mediaSection(whole.output));
      else if (whole[field] !== undefined) body.append(fieldSection(state, label, outputText(whole[field]), "output", field, code));
    }
  });
  details.append(body);
  return details;
}

// An output of AI SDK content items that holds an image ({type: "media", mediaType, data}, as the
// importers keep a tool's image): its texts as text, each PNG, JPEG, GIF or WebP as a picture from
// a data: URL, any other media as a note. Copy still gives the JSON.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function mediaItems(output) {
  return Array.isArray(output) ? output.filter((i) => i && typeof i === "object" && i.type === "media") : [];
}

function hasMedia(output) {
  return mediaItems(output).length > 0;
}

export function mediaBytes(item) {
  const data = typeof item.data === "string" ? item.data : "";
  return Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
}

function mediaSection(output) {
  const section = el("section", "field media-output");
  section.dataset.field = "output";
  const json = outputText(output);
  section.append(fieldHead("Output", async () => json));
  let n = 0;
  for (const item of output) {
    if (item && typeof item === "object" && item.type === "text" && typeof item.text === "string") {
      section.append(pre(item.text));
    } else if (item && typeof item === "object" && item.type === "media") {
      n += 1;
      const type = String(item.mediaType ?? "");
      const data = typeof item.data === "string" ? item.data : "";
      const facts = `${type || "media"} · ${formatBytes(mediaBytes(item))}`;
      if (RASTER_TYPE.test(type) && BASE64.test(data)) {
        const figure = el("figure", "tool-image");
        const img = el("img", "file-image");
        img.alt = `Image ${n} returned by the tool (${facts})`;
        img.src = `data:${type.toLowerCase()};base64,${data}`;
        figure.append(img, el("figcaption", "media", facts));
        section.append(figure);
      } else {
        section.append(el("p", "media", `${facts}: not drawn (only PNG, JPEG, GIF and WebP are)`));
      }
    } else {
      section.append(pre(outputText(item), "out json"));
    }
  }
  return section;
}

// A file change drawn as a unified diff (diff.js); the input follows it as it was written.
function changeSection(rows, lang) {
  const section = el("section", "field change");
  const removed = rows.filter((r) => r[0] === "-").length;
  const added = rows.filter((r) => r[0] === "+").length;
  const text = rows.map(([sign, line]) => (sign === "@" ? "" : sign) + line).join("\n");
  section.append(fieldHead(`Change · −${removed} +${added}`, async () => text));
  const node = el("pre", "out diff");
  node.tabIndex = 0;
  section.append(highlightLater(diffNode(rows, node), lang, "diff"));
  return section;
}

function otherFold(msgId, index, part) {
  const details = fold("other", msgId, index);
  details.append(summary(el("span", "kind", String(part.type ?? "part"))));
  const body = el("div", "fold-body");
  body.append(jsonBlock("Data", part));
  details.append(body);
  return details;
}

const RASTER_URL = /^data:image\/(png|jpeg|gif|webp);base64,/i;
const RASTER_TYPE = /^image\/(png|jpeg|gif|webp)$/i;

// The bytes of a data: URL as an opaque download (never a type the browser would render).
function dataUrlBlob(url) {
  const comma = url.indexOf(",");
  if (!/^data:/i.test(url) || comma < 0) return null;
  const meta = url.slice(5, comma);
  const body = url.slice(comma + 1);
  let bytes;
  try {
    if (/;base64$/i.test(meta)) {
      const binary = atob(body);
      bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    } else {
      bytes = new TextEncoder().encode(decodeURIComponent(body));
    }
  } catch {
    return null;
  }
  return new Blob([bytes], { type: "application/octet-stream" });
}

function downloadButton(url, name) {
  const button = el("button", "file-download", "Download");
  button.type = "button";
  button.addEventListener("click", () => {
    const blob = dataUrlBlob(url);
    if (!blob) {
      button.textContent = "Cannot be downloaded";
      button.disabled = true;
      return;
    }
    const href = URL.createObjectURL(blob);
    const link = el("a");
    link.href = href;
    link.download = name;
    link.rel = "noopener";
    link.hidden = true;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(href), 60_000);
  });
  return button;
}

// What the file holds: a raster image drawn from its data URL, a download for any other data
// URL (SVG included: never drawn, never opened as a page), nothing more for other URLs.
function fileContent(url, name) {
  if (RASTER_URL.test(url)) {
    const img = el("img", "file-image");
    img.alt = name;
    img.src = url;
    return img;
  }
  if (/^data:/i.test(url)) return downloadButton(url, name);
  return null;
}

// A file sent by reference (its data URL over the bound): a placeholder until someone asks for it.
function fileReference(part, state, name) {
  const box = el("div", "file-ref");
  if (state.status === "reading") {
    box.classList.add("reading");
    box.setAttribute("role", "status");
    box.append(el("span", "", "Reading the whole file…"));
  } else if (state.status === "failed") {
    box.classList.add("failed");
    box.setAttribute("role", "status");
    box.append(el("span", "", `The file was not read: ${state.error}. `));
    const retry = el("button", "retry", "Retry");
    retry.type = "button";
    retry.addEventListener("click", () => state.read({ user: true }).catch(() => {}));
    box.append(retry);
  } else {
    const image = RASTER_TYPE.test(String(part.mediaType ?? ""));
    const show = el("button", "read", image ? "Show image" : "Show file");
    show.type = "button";
    show.title = `Read ${name} (${formatBytes(state.cut.bytes)})`;
    show.addEventListener("click", () => state.read({ user: true }).catch(() => {}));
    box.append(show);
  }
  return box;
}

function fileNode(msgId, index, part, state) {
  const cut = state && state.cut && state.cut.field === "url" ? state.cut : null;
  const whole = cut ? state.wholeFor(part) : part;
  const url = whole && typeof whole.url === "string" ? whole.url : null;
  const node = el("div", "part file" + (cut ? " by-reference" : ""));
  const named = [part.filename, part.title].find((v) => typeof v === "string" && v);
  const name = named || (url && !/^data:/i.test(url) ? url : "") || "file";
  const href = url ? safeHref(url) : null;
  const label = el(href ? "a" : "span", "file-name", String(name));
  if (href) {
    label.href = href;
    label.rel = "noopener noreferrer nofollow";
    label.target = "_blank";
  }
  node.append(el("span", "kind", part.type === "reasoning-file" ? "Thought file" : "File"), label);
  const facts = [part.mediaType ? String(part.mediaType) : null, cut ? formatBytes(cut.bytes) : null].filter(Boolean);
  if (facts.length) node.append(el("span", "media", facts.join(" · ")));
  const content = cut && !url ? fileReference(part, state, String(name)) : url ? fileContent(url, String(name)) : null;
  if (content) {
    const body = el("div", "file-body");
    body.append(content);
    node.append(body);
  }
  return node;
}

// Claude Code writes some of its own doings into the conversation as tagged text: a slash
// command (<command-name>, <command-message>, <command-args>), its output (<local-command-stdout>),
// a caveat before them (<local-command-caveat>) and reminders it adds to prompts and results
// (<system-reminder>). They are drawn for what they are, as text, never as HTML.
const CAVEAT = /^\s*<local-command-caveat>([\s\S]*?)<\/local-command-caveat>\s*$/;
const STDOUT = /^\s*<local-command-(stdout|stderr)>([\s\S]*?)<\/local-command-\1>\s*$/;
const COMMAND = /<command-name>([\s\S]*?)<\/command-name>/;
const COMMAND_ARGS = /<command-args>([\s\S]*?)<\/command-args>/;
const REMINDER = /<system-reminder>([\s\S]*?)<\/system-reminder>/g;
// What Claude Code writes as a user line when the person stops it (Escape), not what they typed.
const INTERRUPTED = /^\s*\[Request interrupted by user[^\]\n]{0,80}\]\s*$/;

function metaFold(msgId, index, label, text, className = "meta") {
  const details = fold(className, msgId, index);
  details.dataset.field = "text";
  const preview = plainText(text.slice(0, 400)).replace(/\s+/g, " ").trim();
  details.append(summary(el("span", "kind", label), el("span", "preview", preview.slice(0, 140))));
  const body = el("div", "fold-body");
  body.append(pre(text, "out meta-text"));
  details.append(body);
  return details;
}

function claudeCodeText(msgId, index, part, state) {
  const text = String(part.text ?? "");
  const meta = state && state.meta && typeof state.meta === "object" ? state.meta : {};
  if (meta.compactSummary === true) {
    const details = fold("meta compact", msgId, index);
    details.dataset.field = "text";
    const preview = plainText(text.slice(0, 400)).replace(/\s+/g, " ").trim();
    details.append(summary(el("span", "kind", "Compaction summary"), el("span", "preview", preview.slice(0, 140)), el("span", "size", formatBytes(new TextEncoder().encode(text).length))));
    const body = el("div", "fold-body");
    const md = el("div", "thought-text");
    md.append(applyMarks(renderMarkdown(text), state, "text", text, 0));
    body.append(md);
    details.append(body);
    return details;
  }
  let found = CAVEAT.exec(text);
  if (found) return metaFold(msgId, index, "Caveat", found[1].trim());
  // A line Claude Code marked isMeta (the caveat, an expanded command's prompt): folded away.
  if (meta.isMeta === true && !COMMAND.test(text) && !STDOUT.test(text)) {
    return metaFold(msgId, index, /^\s*Caveat:/.test(text) ? "Caveat" : "Meta", text.trim());
  }
  if (INTERRUPTED.test(text)) {
    const node = el("div", "part cc-interrupt", text.trim());
    node.dataset.cc = "interrupt";
    return node;
  }
  if (!text.includes("<")) return null;
  found = STDOUT.exec(text);
  if (found) {
    const node = el("div", "part cc-output");
    node.dataset.cc = "output";
    const out = found[2].replace(/^\n+|\s+$/g, "");
    node.append(el("span", "cc-label", found[1] === "stderr" ? "stderr" : "output"));
    if (out) node.append(applyMarks(pre(out, "out cc-out"), state, "text", out, text.indexOf(found[2])));
    else node.append(el("span", "muted", "(no output)"));
    return node;
  }
  found = COMMAND.exec(text);
  if (found && text.replace(/<(command-name|command-message|command-args)>[\s\S]*?<\/\1>/g, "").trim() === "") {
    const node = el("div", "part cc-command");
    node.dataset.cc = "command";
    const name = found[1].trim();
    node.append(el("code", "command-chip", name.startsWith("/") ? name : "/" + name));
    const args = (COMMAND_ARGS.exec(text) || [])[1];
    if (args && args.trim()) node.append(el("span", "command-args", args.trim()));
    return node;
  }
  if (!text.includes("<system-reminder>")) return null;
  const node = el("div", "part text");
  node.dataset.field = "text";
  const reminders = [];
  const rest = text.replace(REMINDER, (_, body) => {
    reminders.push(body.trim());
    return "";
  }).trim();
  if (rest) node.append(renderMarkdown(rest));
  else node.dataset.cc = "meta";
  for (const r of reminders) {
    const details = el("details", "fold meta reminder");
    const preview = r.replace(/\s+/g, " ").trim();
    details.append(summary(el("span", "kind", "System reminder"), el("span", "preview", preview.slice(0, 140))));
    const body = el("div", "fold-body");
    body.append(pre(r, "out meta-text"));
    details.append(body);
    node.append(details);
  }
  return node;
}

// Codex gives the model context as user messages of its own (its environment, AGENTS.md, the
// instructions); its importer marks them `injected`. Not a person's prompt: folded away as meta.
const INJECTED = [
  [/^\s*<environment_context>/, "Environment context"],
  [/^\s*<user_instructions>/, "User instructions"],
  [/^\s*# AGENTS\.md/, "AGENTS.md"],
  [/^\s*<permissions/, "Permissions"],
  [/^\s*<INSTRUCTIONS>/, "Instructions"],
];

function injectedText(msgId, index, part, state) {
  const meta = state && state.meta && typeof state.meta === "object" ? state.meta : {};
  // A line nobody typed that the importer labels (a task's notification, an API retry, a report
  // between agents): folded away under its label.
  if (typeof meta.notice === "string" && meta.notice) return metaFold(msgId, index, meta.notice, String(part.text ?? "").trim());
  if (meta.injected !== true) return null;
  const text = String(part.text ?? "");
  const found = INJECTED.find(([pattern]) => pattern.test(text));
  return metaFold(msgId, index, found ? found[1] : "Context", text.trim());
}

// One part as an element. `state` is the part's fold state; `ctx` gives subagent folds.
export function renderPart(msgId, index, part, state, ctx) {
  let node;
  const type = typeof part?.type === "string" ? part.type : "";
  if (toolName(part) !== null) return toolFold(msgId, index, part, state, ctx);
  if (type === "reasoning") return reasoningFold(msgId, index, part, state);
  if (type === "text" && state?.cut?.field === "text") return longTextFold(msgId, index, part, state);
  if (type === "text") {
    const own = injectedText(msgId, index, part, state) || claudeCodeText(msgId, index, part, state);
    if (own) {
      own.dataset.message = msgId;
      own.dataset.part = String(index);
      return own;
    }
    if (state && state.outline) return proseFold(msgId, index, part, state);
    node = el("div", "part text");
    node.dataset.field = "text";
    const text = String(part.text ?? "");
    node.append(applyMarks(renderMarkdown(text), state, "text", text, 0));
    if (part.state === "streaming") node.classList.add("streaming");
  } else if (type === "step-start") {
    node = el("div", "part step");
  } else if (type === "file" || type === "reasoning-file") {
    node = fileNode(msgId, index, part, state);
  } else if (type === "source-url") {
    node = el("div", "part source");
    const href = safeHref(part.url ?? "");
    const a = el(href ? "a" : "span", "", String(part.title || part.url || "source"));
    if (href) {
      a.href = href;
      a.rel = "noopener noreferrer nofollow";
      a.target = "_blank";
    }
    node.append(el("span", "kind", "Source"), a);
  } else if (type === "source-document") {
    node = el("div", "part source");
    node.append(el("span", "kind", "Document"), el("span", "", String(part.title || part.filename || "")));
  } else {
    return otherFold(msgId, index, part);
  }
  node.dataset.message = msgId;
  node.dataset.part = String(index);
  return node;
}

// What the states no result came for mean, on hover.
const STATE_TITLES = {
  unknown: "No result was recorded for this call (the turn ended, or the log keeps none): its outcome is not known",
  "no-result": "This call got no result before the conversation went on",
};

function stateBadge(shown, label) {
  const badge = el("span", "badge state state-" + shown, label);
  if (STATE_TITLES[shown]) badge.title = STATE_TITLES[shown];
  return badge;
}
