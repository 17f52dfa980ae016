// The address of a place in a transcript, as the panel and `foldline search` write it:
//   /agents/{agent}?call={call}#msg={message}&part={index}&field={field}&at={start}
// (`call` only for a subagent's message). Read leniently: `call` in the query or the fragment,
// `start=` for `at=`, and `end=` when present (it is never written).

import { shareToken } from "./api.js";

const FIELDS = new Set(["text", "output", "errorText", "input"]);
const WHOLE = /^\d{1,15}$/;

// In a share link's panel, a place is in the share's own address (/s/{token}).
export function hitAddress(hit) {
  let path = shareToken == null ? "/agents/" + encodeURIComponent(hit.agent_id) : "/s/" + encodeURIComponent(shareToken);
  if (hit.call != null) path += "?call=" + encodeURIComponent(hit.call);
  const fragment = ["msg=" + encodeURIComponent(hit.message_id), "part=" + hit.part, "field=" + encodeURIComponent(hit.field), "at=" + hit.start];
  return path + "#" + fragment.join("&");
}

// A hit as a place to show: {call, message, part, field, start, end}.
export function hitTarget(hit) {
  return { call: hit.call ?? null, message: hit.message_id, part: hit.part, field: hit.field, start: hit.start, end: hit.end };
}

// The place the address names, or null (an address without a place, or one that does not parse).
export function addressTarget(loc = location) {
  const h = new URLSearchParams(loc.hash.replace(/^#/, ""));
  const call = new URLSearchParams(loc.search).get("call") || h.get("call") || null;
  const message = h.get("msg");
  const part = h.get("part");
  const field = h.get("field");
  const at = h.get("at") ?? h.get("start");
  const end = h.get("end");
  if (message && WHOLE.test(part || "") && FIELDS.has(field) && WHOLE.test(at || "")) {
    const target = { call, message, part: Number(part), field, start: Number(at), end: null };
    if (WHOLE.test(end || "") && Number(end) > target.start) target.end = Number(end);
    return target;
  }
  return call ? { call, message: null } : null;
}
