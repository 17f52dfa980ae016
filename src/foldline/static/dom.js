// The panel's one way to make an element: text from a transcript only ever reaches the page
// through textContent or text nodes, control characters dropped.

import { dropControls } from "./markdown.js";

// An element; its text (if any) is drawn as text, control characters dropped.
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = dropControls(text);
  return node;
}
