// Colouring a block of code (loaded by highlight.js, with Prism, when code is first on screen).
// Prism (vendored, see vendor/prism/) cuts the code into tokens with Prism.tokenize, which returns
// tokens, not HTML; each token's range of the text already drawn is wrapped in a
// <span class="tok-…"> around a text node split from it (the search marks' way: no markup is
// ever parsed, nothing goes through innerHTML). highlight.js keeps a block past its LIMIT out.

import Prism from "./vendor/prism/prism.js";

// How much of each line is not code. "numbered": a Read's `cat -n` lines ("    12→code" or
// "    12\tcode"): the number is dimmed, and a line without one (a note, a reminder) is left
// plain. "diff": a diff's sign; a hunk or header line is left plain. ("file", given to
// highlightLater, is "numbered" when the first lines are, else "plain".)
const NUMBERED = /^ *\d+(?:→|\t)/;
const PREFIXES = {
  plain: () => 0,
  numbered: (line) => {
    const found = NUMBERED.exec(line);
    return found ? found[0].length : line.length;
  },
  diff: (line) => (/^(?:@@|\+\+\+ |--- )/.test(line) ? line.length : Math.min(1, line.length)),
};

// Colour `node` now, once: its text in its data-lang.
export function colour(node) {
  if (!node.isConnected || node.dataset.coloured) return;
  const text = node.textContent;
  const grammar = Prism.languages[node.dataset.lang];
  if (!grammar) return;
  let lines = node.codeLines;
  if (lines === "file") lines = text.split("\n", 5).some((l) => NUMBERED.test(l)) ? "numbered" : "plain";
  paint(node, ranges(grammar, text, PREFIXES[lines] || PREFIXES.plain));
  node.dataset.coloured = node.dataset.lang;
}

// The token ranges of `text` [[start, end, className]], in order, in the text's own offsets:
// the code (each line past its prefix) is tokenized as one, and each range is mapped back.
function ranges(grammar, text, prefix) {
  const lines = text.split("\n");
  const starts = []; // per line: its start in `text`, its code's start in `code`, its prefix
  const code = [];
  let at = 0;
  let codeAt = 0;
  for (const line of lines) {
    const skip = prefix(line);
    starts.push([at, codeAt, skip]);
    code.push(line.slice(skip));
    codeAt += line.length - skip + 1;
    at += line.length + 1;
  }
  const flat = [];
  flatten(Prism.tokenize(code.join("\n"), grammar), "", flat, 0);
  const out = [];
  let n = 0; // the line the next range starts in
  for (let [a, b, cls] of flat) {
    while (a < b) {
      while (n + 1 < starts.length && starts[n + 1][1] <= a) n += 1;
      const [lineAt, lineCode] = starts[n];
      const lineEnd = n + 1 < starts.length ? starts[n + 1][1] - 1 : Infinity; // its "\n" in `code`
      const end = Math.min(b, lineEnd);
      if (end > a) out.push([lineAt + starts[n][2] + (a - lineCode), lineAt + starts[n][2] + (end - lineCode), cls]);
      a = end >= lineEnd ? lineEnd + 1 : end;
    }
  }
  starts.forEach(([lineAt, , skip]) => {
    if (skip > 0 && prefix === PREFIXES.numbered && NUMBERED.test(text.slice(lineAt, lineAt + skip))) {
      out.push([lineAt, lineAt + skip, "tok-line-number"]);
    }
  });
  return out.sort((x, y) => x[0] - y[0]);
}

// Prism's token stream as flat [start, end, classes] ranges (a nested token's classes carry its
// parents'); a plain string between tokens gives none.
function flatten(stream, classes, out, at) {
  for (const token of stream) {
    if (typeof token === "string") {
      if (classes) out.push([at, at + token.length, classes]);
      at += token.length;
      continue;
    }
    const names = [token.type, ...(Array.isArray(token.alias) ? token.alias : token.alias ? [token.alias] : [])];
    const cls = (classes ? classes + " " : "") + names.map((t) => "tok-" + String(t).replace(/[^a-z-]/gi, "")).join(" ");
    const content = token.content;
    if (typeof content === "string") {
      out.push([at, at + content.length, cls]);
      at += content.length;
    } else at = flatten(Array.isArray(content) ? content : [content], cls, out, at);
  }
  return at;
}

// Wrap each range of `node`'s text in a span: every text node under it is replaced by its pieces
// (text nodes, and spans holding text nodes). Elements already there (a search mark) stay.
function paint(node, spans) {
  const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
  const texts = [];
  while (walker.nextNode()) texts.push(walker.currentNode);
  let at = 0;
  let k = 0;
  for (const textNode of texts) {
    const data = textNode.data;
    const end = at + data.length;
    while (k < spans.length && spans[k][1] <= at) k += 1;
    if (k >= spans.length || spans[k][0] >= end) {
      at = end;
      continue;
    }
    const pieces = document.createDocumentFragment();
    let from = at;
    for (let j = k; j < spans.length && spans[j][0] < end; j += 1) {
      const a = Math.max(spans[j][0], from);
      const b = Math.min(spans[j][1], end);
      if (b <= a) continue;
      if (a > from) pieces.append(document.createTextNode(data.slice(from - at, a - at)));
      const span = document.createElement("span");
      span.className = spans[j][2];
      span.append(document.createTextNode(data.slice(a - at, b - at)));
      pieces.append(span);
      from = b;
    }
    if (from < end) pieces.append(document.createTextNode(data.slice(from - at)));
    textNode.replaceWith(pieces);
    at = end;
  }
}
