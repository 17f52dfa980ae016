// Terminal output: SGR colour codes become classes, every other escape sequence is dropped,
// and the text itself only ever goes into text nodes.

// CSI … final byte, OSC … BEL/ST, and two-byte escapes.
const ESCAPE = /\x1b\[([0-9;:?]*)([\x20-\x2f]*[\x40-\x7e])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[\x20-\x2f]*[\x30-\x7e]?/g;
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]/g;

function cleanControls(text) {
  return text.replace(/\r\n/g, "\n").replace(/\r/g, "\n").replace(CONTROL, "");
}

function applySgr(style, params) {
  const codes = params === "" ? [0] : params.split(/[;:]/).map((c) => (c === "" ? 0 : parseInt(c, 10)));
  for (let i = 0; i < codes.length; i += 1) {
    const c = codes[i];
    if (c === 0) Object.assign(style, { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false });
    else if (c === 1) style.bold = true;
    else if (c === 2) style.dim = true;
    else if (c === 3) style.italic = true;
    else if (c === 4) style.underline = true;
    else if (c === 22) style.bold = style.dim = false;
    else if (c === 23) style.italic = false;
    else if (c === 24) style.underline = false;
    else if ((c >= 30 && c <= 37) || (c >= 90 && c <= 97)) style.fg = c >= 90 ? c - 82 : c - 30;
    else if (c === 39) style.fg = null;
    else if ((c >= 40 && c <= 47) || (c >= 100 && c <= 107)) style.bg = c >= 100 ? c - 92 : c - 40;
    else if (c === 49) style.bg = null;
    else if (c === 38 || c === 48) {
      const key = c === 38 ? "fg" : "bg";
      if (codes[i + 1] === 5 && codes[i + 2] !== undefined) {
        style[key] = codes[i + 2] < 16 ? codes[i + 2] : null;
        i += 2;
      } else if (codes[i + 1] === 2) {
        style[key] = null;
        i += 4;
      }
    }
  }
}

function span(text, style) {
  const classes = [];
  if (style.fg !== null) classes.push("ansi-fg-" + style.fg);
  if (style.bg !== null) classes.push("ansi-bg-" + style.bg);
  if (style.bold) classes.push("ansi-bold");
  if (style.dim) classes.push("ansi-dim");
  if (style.italic) classes.push("ansi-italic");
  if (style.underline) classes.push("ansi-underline");
  if (!classes.length) return document.createTextNode(text);
  const node = document.createElement("span");
  node.className = classes.join(" ");
  node.textContent = text;
  return node;
}

// Fill `target` with `text`, colours rendered, other escapes dropped.
export function renderAnsi(target, text) {
  const source = String(text);
  if (!source.includes("\x1b")) {
    target.textContent = cleanControls(source);
    return;
  }
  const style = { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false };
  const fragment = document.createDocumentFragment();
  let last = 0;
  for (const m of source.matchAll(ESCAPE)) {
    if (m.index > last) fragment.append(span(cleanControls(source.slice(last, m.index)), style));
    last = m.index + m[0].length;
    if (m[2] === "m") applySgr(style, m[1]);
  }
  if (last < source.length) fragment.append(span(cleanControls(source.slice(last)), style));
  target.replaceChildren(fragment);
}

// `text` without escape sequences (a snippet is plain text: it shows no colours).
export function stripAnsi(text) {
  return String(text).replace(ESCAPE, "");
}
