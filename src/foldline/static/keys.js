// Moving around a transcript from the keyboard: j/k between messages, [/] between a person's
// prompts, g/G to the first and last message, o/Enter opens (or closes) the current message's
// folds, v switches the outline, ? lists the keys. `/` and Ctrl-K (search) live in app.js.

import { shareToken } from "./api.js";
import { el } from "./dom.js";
import { loadStart, outlineOn, setOutline } from "./transcript.js";

export const KEYS = [
  ["j", "next message"],
  ["k", "previous message"],
  ["]", "next prompt of a person"],
  ["[", "previous prompt of a person"],
  ["g", "first message (every older page is read first)"],
  ["G", "last message"],
  ["o / Enter", "open or close the current message's first fold (Shift-O: all of them)"],
  ["v", "outline: every message one line (its thought, text and tool call side by side), or whole again"],
  ...(shareToken == null ? [["/ or Ctrl-K", "search every transcript"]] : []), // a share searches only inside it
  ["?", "this list"],
  ["Escape", shareToken == null ? "close this list or the search box" : "close this list"],
];

// Typing somewhere: a key is a character there, not a shortcut.
export function typing(target) {
  if (!(target instanceof Element)) return false;
  return target.closest("input, textarea, select, [contenteditable]:not([contenteditable=false])") !== null;
}

function articles() {
  return [...document.querySelectorAll("main .transcript > .messages > article.msg")];
}

// The message the keyboard is on: the one focus is in, else the one marked current, else the
// first whose top is on screen.
function currentArticle(list) {
  const active = document.activeElement && document.activeElement.closest ? document.activeElement.closest("article.msg") : null;
  if (active && list.includes(active)) return active;
  const marked = list.find((a) => a.classList.contains("kbd-current"));
  if (marked) return marked;
  const top = (document.querySelector(".agent-head") || document.querySelector(".bar")).getBoundingClientRect().bottom;
  return list.find((a) => a.getBoundingClientRect().bottom > top) || null;
}

function go(article) {
  if (!article) return;
  for (const a of document.querySelectorAll("article.kbd-current")) a.classList.remove("kbd-current");
  article.classList.add("kbd-current");
  if (!article.hasAttribute("tabindex")) article.tabIndex = -1;
  article.focus({ preventScroll: true });
  article.scrollIntoView({ block: "nearest" });
  const top = (document.querySelector(".agent-head") || document.querySelector(".bar")).getBoundingClientRect().bottom;
  const box = article.getBoundingClientRect();
  if (box.top < top) window.scrollBy(0, box.top - top - 8); // not under the sticky bars
}

const prompt = (a) => a.classList.contains("role-user") && !a.classList.contains("cc");

function step(direction, only = () => true) {
  const list = articles();
  if (!list.length) return;
  const here = currentArticle(list);
  let i = here ? list.indexOf(here) : direction > 0 ? -1 : list.length;
  // Before anything is current, j starts at the message on screen.
  if (here && !here.classList.contains("kbd-current") && document.activeElement !== here && only(here)) i -= direction;
  for (i += direction; i >= 0 && i < list.length; i += direction) {
    if (only(list[i])) return go(list[i]);
  }
  if (direction < 0) window.scrollBy(0, -window.innerHeight / 2); // at the top: older pages load
}

// Open or close folds of the current message as a person would (a click on the summary: a cut
// part is read whole when opened, as with the mouse).
function toggle(all) {
  const here = currentArticle(articles());
  if (!here) return;
  const folds = [...here.querySelectorAll(":scope > .msg-body > details.fold")];
  if (!folds.length) return;
  const closed = folds.filter((d) => !d.open);
  const targets = all ? (closed.length ? closed : folds) : [closed[0] || folds[0]];
  for (const d of targets) d.querySelector(":scope > summary").click();
  go(here);
}

export class Shortcuts {
  constructor({ searchOpen }) {
    this.searchOpen = searchOpen;
    this.dialog = null;
  }

  help() {
    if (!this.dialog) {
      const dialog = el("dialog", "keys-dialog");
      dialog.setAttribute("aria-labelledby", "keys-title");
      const title = el("h2", "", "Keyboard shortcuts");
      title.id = "keys-title";
      const table = el("table", "keys");
      const body = el("tbody");
      for (const [key, what] of KEYS) {
        const row = el("tr");
        const cell = el("th");
        cell.scope = "row";
        for (const [i, k] of key.split(" / ").entries()) {
          if (i) cell.append(" / ");
          cell.append(el("kbd", "", k));
        }
        row.append(cell, el("td", "", what));
        body.append(row);
      }
      table.append(body);
      const close = el("button", "", "Close");
      close.type = "button";
      close.addEventListener("click", () => dialog.close());
      dialog.append(title, table, close);
      document.body.append(dialog);
      this.dialog = dialog;
    }
    if (!this.dialog.open) this.dialog.showModal();
  }

  // One key press; true when it was a shortcut (and so taken).
  handle(event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return false;
    if (typing(event.target) || this.searchOpen() || (this.dialog && this.dialog.open && event.key !== "?")) return false;
    const inTranscript = document.querySelector("main .transcript") !== null;
    const onControl = event.target instanceof Element && event.target.closest("summary, button, a, dialog") !== null;
    switch (event.key) {
      case "?":
        this.help();
        return true;
      case "j":
      case "k":
        if (!inTranscript) return false;
        step(event.key === "j" ? 1 : -1);
        return true;
      case "]":
      case "[":
        if (!inTranscript) return false;
        step(event.key === "]" ? 1 : -1, prompt);
        return true;
      case "g":
      case "G": {
        if (!inTranscript) return false;
        const list = articles();
        if (event.key === "G") {
          go(list[list.length - 1]);
          window.scrollTo(0, document.documentElement.scrollHeight);
        } else {
          go(list[0]);
          loadStart().then(() => {
            const first = articles()[0];
            if (first && first !== list[0]) go(first);
          });
        }
        return true;
      }
      case "o":
      case "O":
        if (!inTranscript) return false;
        toggle(event.key === "O");
        return true;
      case "v":
        if (!inTranscript) return false;
        setOutline(!outlineOn());
        return true;
      case "Enter":
        if (!inTranscript || onControl) return false; // Enter on a summary or a button is its own
        if (!(event.target instanceof Element) || !event.target.matches("article.msg")) return false;
        toggle(false);
        return true;
      default:
        return false;
    }
  }
}
