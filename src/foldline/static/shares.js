// Share links from a transcript's toolbar: a dialog that makes a read-only link to this agent
// (and its subagents), lists the links made, and revokes them. The link is shown once, as the
// server keeps only its hash. Asked of the panel's own routes with a same-origin fetch (the
// cookie's account), never from another site.

import { ApiError, getJson } from "./api.js";
import { el } from "./dom.js";
import { copyText } from "./export.js";
import { absoluteTime } from "./format.js";

const EXPIRIES = [["1d", "a day"], ["7d", "a week"], ["30d", "30 days"], ["never", "until revoked"]];
// Picked at first: until revoked, as a link made by `foldline share create` or the API without an
// expiry (and the panel's route without `expires`).
const DEFAULT_EXPIRY = "never";

export function shareButton(info) {
  const b = el("button", "share-agent", "Share…");
  b.type = "button";
  b.addEventListener("click", () => openDialog(info));
  return b;
}

async function post(path, form) {
  let response;
  try {
    response = await fetch(path, { method: "POST", credentials: "same-origin", body: new URLSearchParams(form) });
  } catch {
    throw new ApiError(0, "the server could not be reached");
  }
  if (response.status === 204) return null;
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body?.error?.message || response.statusText);
  return body;
}

function openDialog(info) {
  const dialog = el("dialog", "share-dialog");
  dialog.setAttribute("aria-labelledby", "share-title");
  const title = el("h2", "", "Share a read-only link");
  title.id = "share-title";
  const what = el("p", "", `Anyone with the link can read “${info.title || "Untitled"}” and its subagents, `
    + "without signing in, and nothing else, until it expires or is revoked.");
  const label = el("label", "share-expires", "Expires after ");
  const expires = el("select");
  expires.name = "expires";
  for (const [value, text] of EXPIRIES) {
    const option = el("option", "", text);
    option.value = value;
    option.selected = value === DEFAULT_EXPIRY;
    expires.append(option);
  }
  label.append(expires);
  const made = el("div", "share-made");
  made.hidden = true;
  const status = el("p", "share-status");
  status.setAttribute("role", "status");
  const list = el("ul", "share-list");
  const create = el("button", "", "Create link");
  create.type = "button";
  const close = el("button", "", "Close");
  close.type = "button";
  close.addEventListener("click", () => dialog.close());
  create.addEventListener("click", async () => {
    create.disabled = true;
    status.textContent = "";
    try {
      const share = await post(`/agents/${encodeURIComponent(info.id)}/share`, { expires: expires.value });
      showMade(made, share);
      await drawList(list, info, status, made);
    } catch (error) {
      status.textContent = "The link could not be made: " + error.message;
    } finally {
      create.disabled = false;
    }
  });
  const buttons = el("div", "dialog-buttons");
  buttons.append(close, create);
  dialog.append(title, what, label, made, status, el("h3", "", "Links of this agent"), list, buttons);
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  create.focus();
  drawList(list, info, status, made);
}

function showMade(made, share) {
  const url = share.url;
  made.dataset.share = share.id;
  const field = el("input", "share-url");
  field.readOnly = true;
  field.value = url;
  field.setAttribute("aria-label", "The share link");
  const copy = el("button", "", "Copy link");
  copy.type = "button";
  copy.addEventListener("click", () => copyText(Promise.resolve(url)).then(() => (copy.textContent = "Copied")));
  made.replaceChildren(el("p", "", "Copy it now: it is not shown again."), field, copy);
  made.hidden = false;
  field.select();
}

async function drawList(list, info, status, made) {
  let found;
  try {
    found = await getJson(`/api/agents/${encodeURIComponent(info.id)}/shares`);
  } catch (error) {
    status.textContent = "The links could not be read: " + error.message;
    return;
  }
  const rows = found.shares.map((share) => {
    const li = el("li");
    const when = share.expires_at ? "expires " + absoluteTime(Date.parse(share.expires_at)) : "never expires";
    const revoke = el("button", "revoke-share", "Revoke");
    revoke.type = "button";
    revoke.setAttribute("aria-label", `Revoke the link made ${absoluteTime(Date.parse(share.created_at))}`);
    revoke.addEventListener("click", async () => {
      revoke.disabled = true;
      try {
        await post(`/shares/${encodeURIComponent(share.id)}/revoke`, {});
        if (made.dataset.share === share.id) {
          made.replaceChildren(el("p", "share-revoked", "That link was revoked: it opens nothing now."));
        }
        await drawList(list, info, status, made);
      } catch (error) {
        status.textContent = "The link could not be revoked: " + error.message;
        revoke.disabled = false;
      }
    });
    li.append(el("span", "", `made ${absoluteTime(Date.parse(share.created_at))}, ${when} `), revoke);
    return li;
  });
  list.replaceChildren(...(rows.length ? rows : [el("li", "none", "No link opens this agent now.")]));
}
