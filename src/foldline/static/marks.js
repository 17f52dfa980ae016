// Code points and marks. The API counts offsets in code points; JavaScript strings index UTF-16
// units, so every offset from the API goes through these walks. A match is marked with <mark>
// elements wrapped around existing text nodes: no markup is ever parsed.

// The number of code points in `text`.
export function cpLength(text) {
  let n = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i += 1;
    }
    n += 1;
  }
  return n;
}

// The UTF-16 index of code point `cp` in `text` (clamped to its length).
export function cpIndex(text, cp) {
  let i = 0;
  for (let n = 0; n < cp && i < text.length; n += 1) {
    const c = text.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  return i;
}

// Code points [start, end) of `text`.
export function cpSlice(text, start, end) {
  const a = cpIndex(text, start);
  return text.slice(a, a + cpIndex(text.slice(a), end - start));
}

// Wrap UTF-16 range [from, to) of the text under `root` in <mark class=…> elements (one per
// text node it crosses). Returns the first mark, or null.
function wrapRange(root, from, to, className) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const spans = [];
  let at = 0;
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const end = at + node.data.length;
    if (end > from && at < to) spans.push([node, Math.max(0, from - at), Math.min(node.data.length, to - at)]);
    at = end;
    if (at >= to) break;
  }
  let first = null;
  for (const [node, a, b] of spans) {
    if (a >= b) continue;
    let target = node;
    if (a > 0) target = target.splitText(a);
    if (b - a < target.data.length) target.splitText(b - a);
    const mark = document.createElement("mark");
    mark.className = className;
    target.replaceWith(mark);
    mark.append(target);
    if (!first) first = mark;
  }
  return first;
}

// Where the `nth` (0-based, non-overlapping) occurrence of `needle` starts in `haystack`,
// or the last one when there are fewer; -1 when there is none.
function occurrence(haystack, needle, nth) {
  let found = -1;
  let at = haystack.indexOf(needle);
  for (let i = 0; at !== -1; i += 1) {
    found = at;
    if (i === nth) break;
    at = haystack.indexOf(needle, at + needle.length);
  }
  return found;
}

function count(haystack, needle, before) {
  let n = 0;
  for (let at = haystack.indexOf(needle); at !== -1 && at < before; at = haystack.indexOf(needle, at + needle.length)) n += 1;
  return n;
}

// Mark code points [start, end) of a field in `root`, which draws `source`: the field's code
// points from `offset` on. What is drawn may differ from the source (Markdown markers, ANSI
// escapes and control characters are not drawn), so the match is found as the same occurrence
// of the same text in what is drawn. Returns the first <mark>, or null.
export function markSource(root, source, offset, start, end, className = "hit") {
  const length = cpLength(source);
  const a = Math.max(0, start - offset);
  const b = Math.min(length, end - offset);
  if (b <= a) return null;
  const from = cpIndex(source, a);
  const needle = source.slice(from, from + cpIndex(source.slice(from), b - a));
  const drawn = root.textContent;
  for (const piece of [needle, ...needle.split(/\s*\n\s*/).filter((p) => p && p !== needle)]) {
    const before = piece === needle ? from : source.indexOf(piece, from);
    const at = occurrence(drawn, piece, count(source, piece, before));
    if (at !== -1) return wrapRange(root, at, at + piece.length, className);
  }
  return null;
}
