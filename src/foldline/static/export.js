// Copy and download the whole transcript: the server's export (GET /api/agents/{agent}/export,
// or a share link's /api/shared/{token}/agents/{agent}/export), whole (never cut), every subagent
// included, whatever the screen has loaded. A download is a plain link, so the browser writes the
// export to disk as it arrives (nothing held here).

import { ApiError, agentPath } from "./api.js";
import { el } from "./dom.js";

export const FORMATS = { md: "Markdown", html: "HTML", json: "JSON" };

export function exportPath(agent, format) {
  return agentPath(agent) + "/export?format=" + encodeURIComponent(format);
}

// The export's text (for Copy): the Markdown a person pastes in an issue or hands to an agent.
export async function exportText(agent, format = "md") {
  let response;
  try {
    response = await fetch(exportPath(agent, format), { credentials: "same-origin" });
  } catch {
    throw new ApiError(0, "the server could not be reached");
  }
  if (!response.ok) {
    let message = response.statusText;
    try {
      const body = await response.json();
      if (body && body.error && typeof body.error.message === "string") message = body.error.message;
    } catch {
      // not JSON: the status text says it
    }
    throw new ApiError(response.status, message || "the export failed");
  }
  return response.text();
}

// A link that downloads the export in `format` as `name`.
export function downloadLink(agent, format, name) {
  const link = el("a", "button download-" + format, "Download " + FORMATS[format]);
  link.href = exportPath(agent, format);
  link.download = name;
  return link;
}

// Copy with the click's user activation kept across the read: ClipboardItem takes a promise.
export async function copyText(textPromise) {
  if (window.ClipboardItem && navigator.clipboard.write) {
    const blob = textPromise.then((text) => new Blob([text], { type: "text/plain" }));
    await navigator.clipboard.write([new ClipboardItem({ "text/plain": blob })]);
  } else {
    await navigator.clipboard.writeText(await textPromise);
  }
}
