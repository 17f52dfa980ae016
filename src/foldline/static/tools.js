// What a tool part says about itself: its tool's name, the state it is shown in, how it ended,
// how long it ran, and the input its row shows.

import { plainText } from "./markdown.js";

export function toolName(part) {
  if (part.type === "dynamic-tool") return typeof part.toolName === "string" ? part.toolName : "tool";
  if (typeof part.type === "string" && part.type.startsWith("tool-")) return part.type.slice(5);
  return null;
}

const STATES = {
  "input-streaming": "writing input…",
  "input-available": "running",
  "approval-requested": "waiting for approval",
  "approval-responded": "answered",
  "output-available": "done",
  "output-error": "error",
  "output-denied": "denied",
};

// The outcome the service gives an open tool at a turn's end is marked in a field: not known, so not an error.
const unknownOutcome = (part) => part.resultProviderMetadata?.foldline?.outcome === "unknown";
const PENDING = new Set(["input-streaming", "input-available"]);

// The state a tool part is shown in: [badge class, label]. A tool still waiting for its result in
// a message that is no longer the last one cannot be running: it got no result.
export function toolState(part, last) {
  const state = String(part.state ?? "");
  if (state === "output-error" && unknownOutcome(part)) return ["unknown", "unknown"];
  if (PENDING.has(state) && !last) return ["no-result", "no result"];
  return [state.replace(/[^a-z-]/g, "") || "unknown", STATES[state] || state];
}

// Exit facts the importers keep in toolMetadata: a non-zero exit code, or an interruption.
export function exitFacts(part) {
  const meta = part.toolMetadata && typeof part.toolMetadata === "object" ? part.toolMetadata : {};
  const facts = [];
  for (const source of [meta.codex, meta.claudeCode]) {
    if (!source || typeof source !== "object") continue;
    const code = [source.exit_code, source.exitCode, source.returnCode].find((c) => typeof c === "number");
    if (code !== undefined && code !== 0) facts.push("exit " + code);
    if (source.interrupted === true) facts.push("interrupted");
  }
  return facts;
}

// The name of the subagent a tool call started: the call's description or kind, else its id.
export function subagentLabel(part) {
  const input = part && part.input && typeof part.input === "object" ? part.input : {};
  for (const key of ["description", "subagent_type", "agent_type", "name"]) {
    if (typeof input[key] === "string" && input[key].trim()) return plainText(input[key]);
  }
  return null;
}

const INPUT_KEYS = ["command", "cmd", "file_path", "path", "pattern", "url", "query", "description", "prompt", "message"];

export function shortInput(input) {
  if (input === undefined || input === null) return "";
  let text;
  if (typeof input === "string") text = input;
  else if (typeof input === "object" && !Array.isArray(input)) {
    const key = INPUT_KEYS.find((k) => input[k] !== undefined && input[k] !== null);
    const value = key === undefined ? input : input[key];
    text = Array.isArray(value) ? value.join(" ") : typeof value === "string" ? value : JSON.stringify(value);
  } else text = JSON.stringify(input);
  text = String(text).replace(/\s+/g, " ").trim();
  return text.length > 140 ? text.slice(0, 139) + "…" : text;
}

// How long a tool ran, in milliseconds, when the importers kept it (toolMetadata).
export function toolDuration(part) {
  const meta = part.toolMetadata && typeof part.toolMetadata === "object" ? part.toolMetadata : {};
  for (const source of [meta.claudeCode, meta.codex, meta.foldline]) {
    if (!source || typeof source !== "object") continue;
    for (const key of ["durationMs", "totalDurationMs", "duration_ms"]) {
      if (typeof source[key] === "number" && source[key] >= 0) return source[key];
    }
  }
  return null;
}
