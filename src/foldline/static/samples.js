// The sample sessions of a first run, in the agents list: their workspace says what they are, each
// row is marked "sample", and one button (after a confirmation) removes them all with a same-site
// form to the panel's /samples/remove (the cookie's account removes; the API's DELETE /api/samples
// takes a bearer token only).

import { el } from "./dom.js";

// The note under the Samples workspace's heading, with its button.
export function samplesNote() {
  const note = el("div", "samples-note");
  note.append(
    el("span", "muted", "Sample sessions shipped with Foldline, imported because this machine had no sessions of its own. "),
  );
  const b = el("button", "remove-samples", "Remove the samples…");
  b.type = "button";
  b.addEventListener("click", confirmRemove);
  note.append(b);
  return note;
}

// The mark on each of their rows.
export function sampleBadge() {
  const badge = el("span", "badge sample", "sample");
  badge.title = "a sample session shipped with Foldline";
  return badge;
}

function confirmRemove() {
  const dialog = el("dialog", "delete-dialog samples-dialog");
  dialog.setAttribute("aria-labelledby", "samples-title");
  const title = el("h2", "", "Remove the sample sessions?");
  title.id = "samples-title";
  const what = el("p", "", "Every agent of the Samples workspace is deleted, with its subagents, search text and usage totals, and the workspace leaves your list. Your own sessions are not touched, and a later first run does not import the samples again.");
  const cancel = el("button", "", "Cancel");
  cancel.type = "button";
  cancel.addEventListener("click", () => dialog.close());
  const go = el("button", "danger", "Remove the samples");
  go.type = "button";
  go.addEventListener("click", send);
  const buttons = el("div", "dialog-buttons");
  buttons.append(cancel, go);
  dialog.append(title, what, buttons);
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  cancel.focus();
}

// A form posted by the page itself: the panel answers with the agents list.
function send() {
  const form = el("form");
  form.method = "post";
  form.action = "/samples/remove";
  document.body.append(form);
  form.submit();
}
