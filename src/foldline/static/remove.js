// Deleting an agent from its transcript: a button for its owner, a confirmation that says what
// goes and what a re-import does, then a same-site form to the panel's delete (the cookie's
// account deletes; the API's DELETE takes a bearer token only).

import { el } from "./dom.js";

// The toolbar's Delete button, for the agent's owner (`me` is /api/me's answer).
export function deleteButton(info, me) {
  if (!me || me.id !== info.owner_id) return null;
  const b = el("button", "delete-agent", "Delete…");
  b.type = "button";
  b.addEventListener("click", () => confirmDelete(info));
  return b;
}

function confirmDelete(info) {
  const dialog = el("dialog", "delete-dialog");
  dialog.setAttribute("aria-labelledby", "delete-title");
  const title = el("h2", "", "Delete this agent?");
  title.id = "delete-title";
  const subagents = (info.subagents || []).length;
  const what = el("p", "", `“${info.title || "Untitled"}”` + (subagents ? ` and its ${subagents} subagent${subagents === 1 ? "" : "s"}` : "")
    + ": every message, its search text and its usage totals are deleted for everyone in the workspace. This cannot be undone.");
  const again = el("p", "", "An imported session comes back the next time its logs are imported (foldline import, or a watched folder), unless you keep it out:");
  const label = el("label", "forget");
  const box = el("input");
  box.type = "checkbox";
  box.name = "forget";
  label.append(box, " Keep it out of later imports (foldline agent delete --forget)");
  const cancel = el("button", "", "Cancel");
  cancel.type = "button";
  cancel.addEventListener("click", () => dialog.close());
  const go = el("button", "danger", "Delete");
  go.type = "button";
  go.addEventListener("click", () => send(info.id, box.checked));
  const buttons = el("div", "dialog-buttons");
  buttons.append(cancel, go);
  dialog.append(title, what, again, label, buttons);
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  cancel.focus();
}

// A form posted by the page itself: the panel answers with the agents list.
function send(agent, forget) {
  const form = el("form");
  form.method = "post";
  form.action = `/agents/${encodeURIComponent(agent)}/delete`;
  if (forget) {
    const field = el("input");
    field.type = "hidden";
    field.name = "forget";
    field.value = "true";
    form.append(field);
  }
  document.body.append(form);
  form.submit();
}
