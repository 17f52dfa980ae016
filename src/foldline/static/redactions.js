// The redaction mark: where a stored text holds a marker such as `[REDACTED:github-token]` (the
// write door put it where a secret was), the panel draws a mark whose title says what kind of
// secret was removed. Marks are made of text nodes and a span, never HTML, and the marker's
// characters stay as they were (find, copy and offsets are unchanged). A watcher on the page
// marks every text as it is drawn: pages, opened folds, slices, live updates.

const MARKER = /\[REDACTED:([a-z0-9][a-z0-9-]{0,63})\]/g;
const MARKED = "[REDACTED:";
const SKIP = ".redacted, textarea, input, script, style";

function split(node) {
  const text = node.data;
  if (!text.includes(MARKED)) return;
  const parent = node.parentElement;
  if (!parent || parent.closest(SKIP)) return;
  const pieces = document.createDocumentFragment();
  let at = 0;
  MARKER.lastIndex = 0;
  for (let found = MARKER.exec(text); found; found = MARKER.exec(text)) {
    if (found.index > at) pieces.append(document.createTextNode(text.slice(at, found.index)));
    const mark = document.createElement("span");
    mark.className = "redacted";
    mark.title = `A secret was removed here (${found[1]}): Foldline redacted it before storing the text.`;
    mark.append(document.createTextNode(found[0]));
    pieces.append(mark);
    at = found.index + found[0].length;
  }
  if (at === 0) return;
  if (at < text.length) pieces.append(document.createTextNode(text.slice(at)));
  node.replaceWith(pieces);
}

// Mark every marker in the text under `root`.
export function markRedactions(root) {
  if (root.nodeType === Node.TEXT_NODE) return split(root);
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const found = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.data.includes(MARKED)) found.push(node);
  }
  found.forEach(split);
}

// Mark what is under `root` now, and whatever is drawn there later.
export function watchRedactions(root) {
  markRedactions(root);
  const observer = new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === "characterData") {
        if (record.target.isConnected) markRedactions(record.target);
        continue;
      }
      for (const node of record.addedNodes) {
        if (node.isConnected && (node.nodeType === Node.TEXT_NODE || node.nodeType === Node.ELEMENT_NODE)) markRedactions(node);
      }
    }
  });
  observer.observe(root, { childList: true, subtree: true, characterData: true });
  return observer;
}
