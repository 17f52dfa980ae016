// Markdown for user and assistant text, drawn as DOM nodes: every piece of the source becomes
// a text node, so raw HTML in the text is shown, never parsed. Links keep only http(s) and mailto.

const SAFE_URL = /^(https?:\/\/|mailto:)/i;

// C0 control characters other than tab and newline (and DEL): drawn as missing-glyph boxes, so
// dropped wherever text is drawn. A CRLF or lone CR becomes a newline first.
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f]/g;

export function dropControls(text) {
  return String(text).replace(/\r\n?/g, "\n").replace(CONTROLS, "");
}

// One line of Markdown as plain text, for a summary row or a title: the markers go, the words stay.
export function plainText(text) {
  return dropControls(text)
    .replace(/!?\[([^\]\n]*)\]\([^)\s]*(?:\s+"[^"]*")?\)/g, "$1")
    .replace(/^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+(?:\[[ xX]\][ \t]+)?)/gm, "")
    .replace(/(\*\*|__|~~)(?=\S)([\s\S]*?\S)\1/g, "$2")
    .replace(/(^|[^\w*])\*(?=[^*\s])([^*\n]*?[^*\s])\*(?!\w)/g, "$1$2")
    .replace(/(^|[^\w])_(?=[^_\s])([^_\n]*?[^_\s])_(?!\w)/g, "$1$2")
    .replace(/`+([^`\n]*?)`+/g, "$1")
    .replace(/\\([\\`*_{}[\]()#+\-.!~|>])/g, "$1")
    .replace(/\s+/g, " ")
    .trim();
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

function link(text, url) {
  const href = safeHref(url);
  if (href === null) return document.createTextNode(text === url ? text : `${text} (${url})`);
  const a = el("a");
  a.href = href;
  a.rel = "noopener noreferrer nofollow";
  a.target = "_blank";
  a.textContent = text;
  return a;
}

const INLINE = new RegExp(
  [
    "(?<code>`+)(?<codeText>[\\s\\S]+?)\\k<code>",
    "\\[(?<linkText>[^\\]\\n]+)\\]\\((?<linkUrl>[^)\\s]+)(?:\\s+\"[^\"]*\")?\\)",
    "<(?<auto>(?:https?:\\/\\/|mailto:)[^>\\s]+)>",
    "(?<bare>https?:\\/\\/[^\\s<>\"]*[^\\s<>\".,:;'!?)\\]])",
    "\\*\\*(?<strong>[^*\\n][\\s\\S]*?)\\*\\*",
    "__(?<strong2>[^_\\n][\\s\\S]*?)__",
    "~~(?<del>[^~\\n][\\s\\S]*?)~~",
    "\\*(?<em>[^*\\s](?:[^*\\n]*[^*\\s])?)\\*",
    "(?<![\\w])_(?<em2>[^_\\s](?:[^_\\n]*[^_\\s])?)_(?![\\w])",
  ].join("|"),
  "g",
);

function textWithBreaks(target, text) {
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (i > 0) target.append(el("br"));
    // A backslash at the end of a line is Markdown's hard line break: the <br> is the break.
    if (i < lines.length - 1 && /(^|[^\\])(\\\\)*\\$/.test(line)) line = line.slice(0, -1);
    if (line) target.append(document.createTextNode(line));
  });
}

export function inline(target, text) {
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    textWithBreaks(target, text.slice(last, m.index));
    last = m.index + m[0].length;
    const g = m.groups;
    if (g.code !== undefined) {
      const code = el("code");
      code.textContent = g.codeText.replace(/^ (.*) $/s, "$1");
      target.append(code);
    } else if (g.linkText !== undefined) {
      target.append(link(g.linkText, g.linkUrl));
    } else if (g.auto !== undefined) {
      target.append(link(g.auto, g.auto));
    } else if (g.bare !== undefined) {
      target.append(link(g.bare, g.bare));
    } else {
      const [tag, inner] =
        g.strong !== undefined ? ["strong", g.strong]
        : g.strong2 !== undefined ? ["strong", g.strong2]
        : g.del !== undefined ? ["del", g.del]
        : ["em", g.em !== undefined ? g.em : g.em2];
      const node = el(tag);
      inline(node, inner);
      target.append(node);
    }
  }
  textWithBreaks(target, text.slice(last));
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

function cells(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
}

function blocks(target, lines) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i += 1;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const close = new RegExp("^ {0,3}" + fence[1][0] + "{" + fence[1].length + ",}\\s*$");
      const body = [];
      i += 1;
      while (i < lines.length && !close.test(lines[i])) body.push(lines[i++]);
      i += 1;
      const pre = el("pre", "code-block");
      const code = el("code");
      code.textContent = body.join("\n");
      if (fence[2]) pre.dataset.lang = fence[2];
      pre.append(code);
      target.append(pre);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const h = el("h" + Math.min(6, heading[1].length + 2));
      inline(h, heading[2]);
      target.append(h);
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      target.append(el("hr"));
      i += 1;
      continue;
    }
    if (QUOTE.test(line)) {
      const body = [];
      while (i < lines.length && QUOTE.test(lines[i])) body.push(lines[i++].replace(QUOTE, ""));
      const quote = el("blockquote");
      blocks(quote, body);
      target.append(quote);
      continue;
    }
    const item = ITEM.exec(line);
    if (item) {
      i = list(target, lines, i, item);
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      i = table(target, lines, i);
      continue;
    }
    const para = [];
    while (
      i < lines.length && lines[i].trim() && !FENCE.test(lines[i]) && !HEADING.test(lines[i]) &&
      !QUOTE.test(lines[i]) && !(para.length && ITEM.test(lines[i]))
    ) {
      para.push(lines[i++]);
    }
    const p = el("p");
    inline(p, para.join("\n"));
    target.append(p);
  }
}

function list(target, lines, start, first) {
  const ordered = /\d/.test(first[2]);
  const node = el(ordered ? "ol" : "ul");
  if (ordered && parseInt(first[2], 10) !== 1) node.start = parseInt(first[2], 10);
  const indent = first[1].length;
  let i = start;
  while (i < lines.length) {
    const m = ITEM.exec(lines[i]);
    if (!m || m[1].length !== indent || /\d/.test(m[2]) !== ordered) break;
    const body = [m[3]];
    i += 1;
    while (i < lines.length && lines[i].trim() && !(ITEM.exec(lines[i]) && ITEM.exec(lines[i])[1].length <= indent)) {
      body.push(lines[i++].replace(/^\s{1,4}/, ""));
    }
    const li = el("li");
    blocks(li, body);
    if (li.childNodes.length === 1 && li.firstChild.tagName === "P") li.replaceChildren(...li.firstChild.childNodes);
    node.append(li);
    while (i < lines.length && !lines[i].trim() && i + 1 < lines.length && ITEM.exec(lines[i + 1])?.[1].length === indent) i += 1;
  }
  target.append(node);
  return i;
}

function table(target, lines, start) {
  const node = el("table");
  const head = el("tr");
  for (const c of cells(lines[start])) {
    const th = el("th");
    inline(th, c);
    head.append(th);
  }
  const thead = el("thead");
  thead.append(head);
  const tbody = el("tbody");
  let i = start + 2;
  while (i < lines.length && lines[i].includes("|") && lines[i].trim()) {
    const tr = el("tr");
    for (const c of cells(lines[i++])) {
      const td = el("td");
      inline(td, c);
      tr.append(td);
    }
    tbody.append(tr);
  }
  node.append(thead, tbody);
  const wrap = el("div", "table-wrap");
  wrap.append(node);
  target.append(wrap);
  return i;
}

export function renderMarkdown(text) {
  const root = el("div", "md");
  blocks(root, dropControls(text).split("\n"));
  return root;
}
