// What a tool part says about itself: its tool's name, the state it is shown in, how it ended,
// how long it ran, and the input its row shows.

import { formatBytes } from "./format.js";
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
    if (source.truncated === true) {
      const was = typeof source.persistedOutputSize === "number" ? ` (was ${formatBytes(source.persistedOutputSize)})` : "";
      facts.push("truncated" + was);
    }
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

// The most telling input of each known tool, for its row: the input's keys whose values are
// shown, in order, or a function of the input. Claude Code's tools, then Codex's; a tool not
// here shows the first of INPUT_KEYS it has. A new format's tools are one line each.
const ROW_INPUT = {
  Bash: ["command"],
  Grep: ["pattern", "path", "glob"],
  Glob: ["pattern", "path"],
  WebFetch: ["url"],
  WebSearch: ["query"],
  Task: ["description"],
  Agent: ["description"],
  Read: ["file_path"],
  Edit: ["file_path"],
  MultiEdit: ["file_path"],
  Write: ["file_path"],
  NotebookEdit: ["notebook_path"],
  shell: ["command"],
  shell_command: ["command"],
  local_shell: ["command"],
  "container.exec": ["command"],
  exec_command: ["cmd"],
  write_stdin: ["chars"],
  web_search: ["query"],
  view_image: ["path"],
  update_plan: ["explanation"],
  apply_patch: (input) => patchFiles(typeof input === "string" ? input : input && (input.input ?? input.patch)),
};

// The files a Codex patch touches ("*** Update File: src/app.ts").
function patchFiles(patch) {
  if (typeof patch !== "string") return null;
  const files = [...patch.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)].map((m) => m[1].trim());
  return files.length ? files.join(" ") : null;
}

const INPUT_KEYS = ["command", "cmd", "file_path", "path", "pattern", "url", "query", "description", "prompt", "message"];

const asText = (value) => (Array.isArray(value) ? value.join(" ") : typeof value === "string" ? value : JSON.stringify(value));

// What a tool's row shows of its input: the tool's own choice (ROW_INPUT), else the first known key.
export function shortInput(input, name = null) {
  if (input === undefined || input === null) return "";
  const rule = name === null ? undefined : ROW_INPUT[name];
  let text = null;
  if (typeof rule === "function") text = rule(input);
  else if (rule && typeof input === "object" && !Array.isArray(input)) {
    const found = rule.filter((k) => input[k] !== undefined && input[k] !== null && input[k] !== "").map((k) => asText(input[k]));
    if (found.length) text = found.join(" · ");
  }
  if (text === null) {
    if (typeof input === "string") text = input;
    else if (typeof input === "object" && !Array.isArray(input)) {
      const key = INPUT_KEYS.find((k) => input[k] !== undefined && input[k] !== null);
      text = asText(key === undefined ? input : input[key]);
    } else text = JSON.stringify(input);
  }
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
