// The API as the panel calls it: same-origin GETs carry the HttpOnly sign-in cookie.
// Opened from a share link (/s/{token}), every read goes under /api/shared/{token} instead, and
// the panel shows only what a share may read (its one agent and its subagents).

const SHARED = /^\/s\/([^/]+)\/?$/.exec((globalThis.location && globalThis.location.pathname) || "");
export const shareToken = SHARED ? decodeURIComponent(SHARED[1]) : null;
const API = shareToken == null ? "/api" : "/api/shared/" + encodeURIComponent(shareToken);

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export async function getJson(path, { signal } = {}) {
  let response;
  try {
    response = await fetch(path, { credentials: "same-origin", signal, headers: { Accept: "application/json" } });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, "the server could not be reached");
  }
  if (response.status === 401 && shareToken == null) {
    location.assign("/signin?next=" + encodeURIComponent(location.pathname));
    throw new ApiError(401, "signed out");
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const message = body && body.error && typeof body.error.message === "string" ? body.error.message : response.statusText;
    throw new ApiError(response.status, message || "the request failed");
  }
  return body;
}

// An agent's path in the API (a share's, in a share link's panel).
export function agentPath(agent) {
  return API + "/agents/" + encodeURIComponent(agent);
}

// What a share link opens: {agent_id, expires_at}.
export function openedShare() {
  return getJson(API);
}

// The base path of a conversation: an agent, or one of its subagents.
export function conversationPath(agent, call) {
  const base = agentPath(agent);
  return call == null ? base : base + "/subagents/" + encodeURIComponent(call);
}

export function page(base, { cut = true, limit = null, before = null } = {}) {
  const query = new URLSearchParams();
  if (cut) query.set("parts", "cut");
  if (limit != null) query.set("limit", String(limit));
  if (before != null) query.set("before", before);
  const q = query.toString();
  return getJson(base + "/messages" + (q ? "?" + q : ""));
}

export function wholePart(base, messageId, index) {
  return getJson(partPath(base, messageId, index));
}

function partPath(base, messageId, index) {
  return base + "/messages/" + encodeURIComponent(messageId) + "/parts/" + encodeURIComponent(String(index));
}

// Code points [start, end) of one field of a part: {field, start, end, length, text}.
export function partSlice(base, messageId, index, field, start, end) {
  const query = new URLSearchParams({ field, start: String(Math.max(0, start)), end: String(Math.max(0, end)) });
  return getJson(partPath(base, messageId, index) + "?" + query.toString());
}

// One page of search hits: {hits, next}. `agent` narrows to one agent and its subagents.
export function search({ q, agent = null, limit = 20, cursor = null }, { signal } = {}) {
  const query = new URLSearchParams({ q, limit: String(limit) });
  if (agent != null) query.set("agent", agent);
  if (cursor != null) query.set("cursor", cursor);
  return getJson(API + "/search?" + query.toString(), { signal });
}
