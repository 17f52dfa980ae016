// Markdown for user and assistant text, drawn as DOM nodes. markdown-it (vendored, see
// vendor/markdown-it/) parses; this module walks its token stream and builds elements with
// createElement and textContent only, so raw HTML in the text is shown, never parsed, and no
// attribute is copied from a token: links keep only http(s) and mailto targets, images only
// data: PNG/JPEG/GIF/WebP.
//
// The work is bounded: markdown-it is linear in its input, nesting is capped (maxNesting), and a
// text that is too long, nested too deep, or that fails to draw for any reason is drawn as plain
// text with a short note, so one message never takes the page down.

import MarkdownIt from "./vendor/markdown-it/markdown-it.esm.min.js";
import { fenceLanguage, highlightLater } from "./highlight.js";

const SAFE_URL = /^(https?:\/\/|mailto:)/i;
const SAFE_IMAGE = /^data:image\/(png|jpeg|gif|webp);base64,[a-z0-9+/=\s]*$/i;

// Past this many characters a text is drawn as plain text, not parsed: the parser is linear, but
// its worst inputs cost about 10 µs a character, so this keeps one message under a few seconds.
export const MARKDOWN_MAX_CHARS = 200_000;
// Blocks and inline spans nest at most this deep (a list level is two: the list and its item).
export const MARKDOWN_MAX_NESTING = 20;
// A summary row or a title is drawn from at most this many characters of its text.
const PLAIN_MAX_CHARS = 4_000;

// C0 control characters other than tab and newline (and DEL): drawn as missing-glyph boxes, so
// dropped wherever text is drawn. A CRLF or lone CR becomes a newline first.
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f]/g;

export function dropControls(text) {
  return String(text).replace(/\r\n?/g, "\n").replace(CONTROLS, "");
}

const md = new MarkdownIt("default", {
  html: false, // raw HTML is text
  linkify: true, // bare http(s):// and mailto: addresses become links
  breaks: true, // a single newline is a line break
  typographer: false,
  maxNesting: MARKDOWN_MAX_NESTING,
});
// Only addresses written with their scheme are linked ("example.com" stays text), and only the
// schemes a link may have here.
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false });
md.linkify.add("ftp:", null);
md.linkify.add("//", null);

// markdown-it stops parsing the rest of a text when blocks nest past maxNesting (the tail would
// be silently missing), so note it and draw that text as plain text instead.
const blockTokenize = md.block.tokenize;
md.block.tokenize = function (state, startLine, endLine) {
  if (state.level >= md.options.maxNesting && startLine < endLine) state.env.tooDeep = true;
  return blockTokenize.call(this, state, startLine, endLine);
};

// One line of Markdown as plain text, for a summary row or a title: the markers go, the words stay.
const LINE_MARKERS = /^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+(?:\[[ xX]\][ \t]+)?)/gm;

export function plainText(text) {
  let source = dropControls(text);
  const cut = source.length > PLAIN_MAX_CHARS;
  if (cut) source = source.slice(0, PLAIN_MAX_CHARS);
  source = source.replace(LINE_MARKERS, "");
  let words;
  try {
    words = [];
    for (const token of md.parseInline(source, {})) collectText(token.children ?? [], words);
    words = words.join("");
  } catch {
    words = source;
  }
  words = words.replace(/\s+/g, " ").trim();
  return cut ? words + "…" : words;
}

function collectText(tokens, out) {
  for (const token of tokens) {
    if (token.type === "softbreak" || token.type === "hardbreak") out.push(" ");
    else if (token.type === "image") collectText(token.children ?? [], out); // its alt text; no deeper
    else if (token.content) out.push(token.content);
  }
}

export function safeHref(url) {
  const trimmed = String(url).trim();
  return SAFE_URL.test(trimmed) ? trimmed : null;
}

function el(tag, className) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  return node;
}

function anchor(href) {
  const a = el("a");
  a.href = href;
  a.rel = "noopener noreferrer nofollow";
  a.target = "_blank";
  return a;
}

const OPEN_TAGS = {
  paragraph_open: "p",
  blockquote_open: "blockquote",
  bullet_list_open: "ul",
  ordered_list_open: "ol",
  list_item_open: "li",
  thead_open: "thead",
  tbody_open: "tbody",
  tr_open: "tr",
  th_open: "th",
  td_open: "td",
  strong_open: "strong",
  em_open: "em",
  s_open: "del",
};
const ALIGN = /^text-align:(left|right|center)$/;

// A code fence's language, kept only when it looks like one.
function language(info) {
  const word = String(info ?? "").trim().split(/\s+/)[0];
  return /^[\w#+.-]{1,40}$/.test(word) ? word : "";
}

function codeBlock(token) {
  const pre = el("pre", "code-block");
  const code = el("code");
  code.textContent = token.content.replace(/\n$/, "");
  const lang = token.type === "fence" ? language(token.info) : "";
  if (lang) pre.dataset.lang = lang;
  pre.append(code);
  highlightLater(code, fenceLanguage(lang)); // coloured once on screen
  return pre;
}

// A text's headings nest under the page's name (its h1): the text's highest heading is drawn as
// an h2 and the others below it in the same steps, so "### Plan" then "#### Step" are h2 and h3.
function headingShift(tokens) {
  let highest = 6;
  for (const token of tokens) {
    if (token.type === "heading_open") highest = Math.min(highest, Number.parseInt(token.tag.slice(1), 10) || 1);
  }
  return 2 - highest;
}

// A flat token stream (markdown-it's opens and closes) into `root`, with an explicit stack, so the
// depth of the text never becomes the depth of this function's recursion. `inline` tokens carry
// their own flat stream in `children`, walked the same way one level down; nothing deeper.
function build(root, tokens, inlineLevel = false) {
  const shift = inlineLevel ? 0 : headingShift(tokens);
  const stack = [root];
  const addressAfter = new Map(); // a link drawn as text -> the address to show after its words
  const top = () => stack[stack.length - 1];
  for (const token of tokens) {
    const type = token.type;
    if (token.nesting === -1) {
      // A close: the matching open pushed exactly one node (links drawn as text push a span).
      if (stack.length > 1) {
        const closed = stack.pop();
        const url = addressAfter.get(closed);
        if (url && closed.textContent !== url) closed.append(document.createTextNode(` (${url})`));
      }
      continue;
    }
    if (OPEN_TAGS[type] !== undefined) {
      // A tight list's paragraphs are hidden: their words go straight into the item.
      if (type === "paragraph_open" && token.hidden) {
        stack.push(top());
        continue;
      }
      const node = el(OPEN_TAGS[type]);
      if (type === "ordered_list_open") {
        const start = Number.parseInt(token.attrGet("start") ?? "1", 10);
        if (Number.isSafeInteger(start) && start !== 1) node.start = start;
      } else if (type === "th_open" || type === "td_open") {
        const align = ALIGN.exec(token.attrGet("style") ?? "");
        if (align) node.style.textAlign = align[1];
      }
      top().append(node);
      stack.push(node);
    } else if (type === "heading_open") {
      const level = Number.parseInt(token.tag.slice(1), 10) || 1;
      const h = el("h" + Math.min(6, level + shift));
      top().append(h);
      stack.push(h);
    } else if (type === "table_open") {
      const wrap = el("div", "table-wrap");
      const table = el("table");
      wrap.append(table);
      top().append(wrap);
      stack.push(table);
    } else if (type === "link_open") {
      const href = safeHref(token.attrGet("href") ?? "");
      let node;
      if (href !== null) {
        node = anchor(href);
      } else {
        // Not a link: its words, then (for a [text](url) link) the address as text.
        node = el("span");
        if (token.markup !== "linkify" && token.markup !== "autolink") addressAfter.set(node, String(token.attrGet("href") ?? ""));
      }
      top().append(node);
      stack.push(node);
    } else if (type === "inline" && !inlineLevel) {
      build(top(), token.children ?? [], true);
    } else if (type === "text" || type === "text_special" || type === "html_inline" || type === "html_block") {
      top().append(document.createTextNode(token.content));
    } else if (type === "softbreak" || type === "hardbreak") {
      top().append(el("br"));
    } else if (type === "code_inline") {
      const code = el("code");
      code.textContent = token.content;
      top().append(code);
    } else if (type === "fence" || type === "code_block") {
      top().append(codeBlock(token));
    } else if (type === "hr") {
      top().append(el("hr"));
    } else if (type === "image") {
      top().append(image(token));
    } else if (token.nesting === 1) {
      // An open this walker does not know: a plain container, so the close still pairs.
      const node = el("span");
      top().append(node);
      stack.push(node);
    } else if (token.content) {
      top().append(document.createTextNode(token.content));
    }
  }
}

// An image is drawn only from a data: URL (the page's CSP allows nothing else from outside, and
// a same-origin address could make the reader's browser send a request with her cookie). Any
// other image is a link to it when its address is http(s), else its alt text.
function image(token) {
  const src = String(token.attrGet("src") ?? "").trim();
  const alt = plainText(token.content ?? "");
  if (SAFE_IMAGE.test(src)) {
    const img = el("img", "file-image");
    img.src = src;
    img.alt = alt;
    return img;
  }
  const href = safeHref(src);
  if (href === null) return document.createTextNode(alt);
  const a = anchor(href);
  a.textContent = alt || href;
  return a;
}

// The text as it is, when it cannot be drawn as Markdown.
function asPlainText(text, why) {
  const root = el("div", "md md-plain");
  const pre = el("pre", "out md-text");
  pre.textContent = text;
  const note = el("p", "muted skipped md-note");
  note.textContent = `Shown as plain text: ${why}.`;
  root.append(pre, note);
  return root;
}

export function inline(target, text) {
  const source = dropControls(text);
  if (source.length > MARKDOWN_MAX_CHARS) {
    target.append(document.createTextNode(source));
    return;
  }
  const holder = document.createDocumentFragment();
  try {
    const tokens = md.parseInline(source, {});
    build(holder, tokens[0]?.children ?? [], true);
  } catch {
    target.append(document.createTextNode(source));
    return;
  }
  target.append(holder);
}

export function renderMarkdown(text) {
  let source = "";
  try {
    source = dropControls(text);
    if (source.length > MARKDOWN_MAX_CHARS) {
      return asPlainText(source, `${source.length.toLocaleString("en")} characters is more than the ${MARKDOWN_MAX_CHARS.toLocaleString("en")} drawn as Markdown`);
    }
    const env = {};
    const tokens = md.parse(source, env);
    if (env.tooDeep) return asPlainText(source, `nested more than ${MARKDOWN_MAX_NESTING} levels deep`);
    const root = el("div", "md");
    build(root, tokens);
    return root;
  } catch (err) {
    console.warn("Foldline: a text could not be drawn as Markdown", err);
    return asPlainText(source, "it could not be drawn as Markdown");
  }
}
