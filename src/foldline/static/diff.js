// A file change as a unified diff: Claude Code's Edit, MultiEdit and Write, Codex's apply_patch.
// Removed lines are <del>, added ones <ins> (each with its - or + kept as text), so the diff reads
// without colour. Built with text nodes only.

const MAX_CELLS = 4_000_000; // past this many line pairs, no line matching: all removed, then all added

function lines(text) {
  const all = String(text ?? "").split("\n");
  if (all.length > 1 && all[all.length - 1] === "") all.pop();
  return all;
}

// The line diff of two texts: [[" " | "-" | "+", line]], by longest common subsequence.
export function lineDiff(before, after) {
  const a = lines(before);
  const b = lines(after);
  if (before === "" || before == null) return b.map((l) => ["+", l]);
  if (a.length * b.length > MAX_CELLS) return [...a.map((l) => ["-", l]), ...b.map((l) => ["+", l])];
  // Common head and tail first: most edits touch a few lines in the middle.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail += 1;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const n = x.length;
  const m = y.length;
  const table = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      table[i][j] = x[i] === y[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const out = a.slice(0, head).map((l) => [" ", l]);
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      out.push([" ", x[i]]);
      i += 1;
      j += 1;
    } else if (i < n && (j === m || table[i + 1][j] >= table[i][j + 1])) {
      out.push(["-", x[i]]); // a change reads as diffs do: its removed lines, then its added ones
      i += 1;
    } else {
      out.push(["+", y[j]]);
      j += 1;
    }
  }
  return out.concat(a.slice(a.length - tail).map((l) => [" ", l]));
}

// Codex's patch format: "*** Update File: p", "@@" hunks, lines marked " ", "-" or "+".
function patchLines(patch) {
  const out = [];
  for (const line of lines(patch)) {
    if (/^\*\*\* (Begin|End) Patch/.test(line)) continue;
    if (line.startsWith("*** ") || line.startsWith("@@")) out.push(["@", line]);
    else if (line.startsWith("-")) out.push(["-", line.slice(1)]);
    else if (line.startsWith("+")) out.push(["+", line.slice(1)]);
    else out.push([" ", line.startsWith(" ") ? line.slice(1) : line]);
  }
  return out;
}

// Claude Code's structuredPatch (kept by the importer): hunks with line numbers.
function hunkLines(hunks) {
  const out = [];
  for (const h of hunks) {
    if (!h || typeof h !== "object" || !Array.isArray(h.lines)) return null;
    out.push(["@", `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`]);
    for (const line of h.lines) {
      const text = String(line);
      const sign = text[0];
      out.push([sign === "-" || sign === "+" ? sign : " ", text.slice(1)]);
    }
  }
  return out;
}

// The diff lines of a tool call, or null when it is not a file change the panel knows.
export function changeLines(name, input, toolMetadata) {
  if (!input || typeof input !== "object") return null;
  const meta = toolMetadata && typeof toolMetadata === "object" && toolMetadata.claudeCode ? toolMetadata.claudeCode : {};
  const path = typeof input.file_path === "string" ? input.file_path : typeof input.path === "string" ? input.path : "";
  const header = path ? [["@", `--- ${path}`], ["@", `+++ ${path}`]] : [];
  if (Array.isArray(meta.structuredPatch) && ["Edit", "MultiEdit", "Write"].includes(name)) {
    const hunks = hunkLines(meta.structuredPatch);
    if (hunks && hunks.length) return [...header, ...hunks];
  }
  if (name === "Edit" && typeof input.old_string === "string" && typeof input.new_string === "string") {
    return [...header, ...lineDiff(input.old_string, input.new_string)];
  }
  if (name === "MultiEdit" && Array.isArray(input.edits)) {
    const out = [...header];
    input.edits.forEach((edit, k) => {
      if (!edit || typeof edit !== "object") return;
      out.push(["@", `@@ edit ${k + 1} of ${input.edits.length}${edit.replace_all ? " (every occurrence)" : ""} @@`]);
      out.push(...lineDiff(String(edit.old_string ?? ""), String(edit.new_string ?? "")));
    });
    return out;
  }
  if (name === "Write" && typeof input.content === "string") {
    return [["@", `+++ ${path}${meta.type === "update" ? " (the whole file, written over the old one)" : ""}`], ...lineDiff("", input.content)];
  }
  if (name === "apply_patch") {
    const patch = typeof input.input === "string" ? input.input : typeof input.patch === "string" ? input.patch : null;
    if (patch !== null) return patchLines(patch);
  }
  return null;
}

export function diffNode(rows, pre) {
  const node = pre;
  for (const [sign, text] of rows) {
    const tag = sign === "-" ? "del" : sign === "+" ? "ins" : "span";
    const line = document.createElement(tag);
    line.className = sign === "@" ? "hunk" : sign === " " ? "ctx" : "";
    line.textContent = (sign === "@" ? "" : sign) + text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "") + "\n";
    node.append(line);
  }
  return node;
}
