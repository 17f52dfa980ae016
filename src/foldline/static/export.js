// Copy and download the whole transcript: whole reads (no `parts=cut`), every message, and
// the transcript of every subagent, whatever the screen has loaded.

import { agentPath, conversationPath, getJson } from "./api.js";
import { formatBytes } from "./format.js";
import { mediaBytes, mediaItems, outputText } from "./parts.js";
import { subagentLabel, toolName } from "./tools.js";

export async function wholeTranscript(agent) {
  const info = await getJson(agentPath(agent));
  const main = await getJson(conversationPath(agent) + "/messages");
  const subagents = {};
  for (const call of info.subagents || []) {
    subagents[call] = (await getJson(conversationPath(agent, call) + "/messages")).messages;
  }
  return { agent: { id: info.id, title: info.title, workspace_id: info.workspace_id }, messages: main.messages, subagents };
}

function fence(text, lang = "") {
  const runs = String(text).match(/`{3,}/g) || [];
  const ticks = "`".repeat(Math.max(3, ...runs.map((r) => r.length + 1)));
  return `${ticks}${lang}\n${text}\n${ticks}`;
}

// An output that holds images: its texts fenced, each image referenced by its type and size
// (it stays in the JSON download), never inlined as base64.
function mediaMarkdown(output) {
  let n = 0;
  return output.map((item) => {
    if (item && item.type === "text" && typeof item.text === "string") return fence(item.text);
    if (item && item.type === "media") {
      n += 1;
      return `*[image ${n}: ${String(item.mediaType ?? "media")}, ${formatBytes(mediaBytes(item))}; not inlined, it is in the JSON download]*`;
    }
    return fence(outputText(item), "json");
  });
}

function partMarkdown(part, subagents, depth) {
  const name = toolName(part);
  if (name !== null) {
    const lines = [`**Tool \`${name}\`** (${part.state ?? "unknown"})`];
    if (part.input !== undefined) lines.push("Input:", fence(outputText(part.input), "json"));
    if (part.output !== undefined && mediaItems(part.output).length) lines.push("Output:", ...mediaMarkdown(part.output));
    else if (part.output !== undefined) lines.push("Output:", fence(outputText(part.output)));
    if (part.errorText !== undefined) lines.push("Error:", fence(outputText(part.errorText)));
    const sub = typeof part.toolCallId === "string" ? subagents[part.toolCallId] : undefined;
    if (sub) {
      const label = subagentLabel(part);
      lines.push(messagesMarkdown(sub, subagents, depth + 1, label ? `Subagent · ${label}` : `Subagent ${part.toolCallId}`));
    }
    return lines.join("\n\n");
  }
  switch (part.type) {
    case "text":
      return String(part.text ?? "");
    case "reasoning":
      return "**Thought**\n\n" + fence(String(part.text ?? ""), "text");
    case "step-start":
      return null;
    case "file":
      return `**File** ${part.filename ?? ""} (${part.mediaType ?? ""}) ${String(part.url ?? "").startsWith("data:") ? "" : part.url ?? ""}`.trim();
    case "source-url":
      return `**Source** [${part.title ?? part.url}](${part.url})`;
    default:
      return `**${part.type}**\n\n` + fence(outputText(part), "json");
  }
}

function messagesMarkdown(messages, subagents, depth, title) {
  const h = "#".repeat(Math.min(6, depth + 1));
  const out = [`${"#".repeat(Math.min(6, depth))} ${title}`];
  for (const message of messages) {
    out.push(`${h} ${message.role}`);
    for (const part of message.parts) {
      const text = partMarkdown(part, subagents, depth + 1);
      if (text !== null && text !== "") out.push(text);
    }
  }
  return out.join("\n\n");
}

export function toMarkdown(data) {
  return messagesMarkdown(data.messages, data.subagents, 1, data.agent.title || `Agent ${data.agent.id}`) + "\n";
}

export function toJson(data) {
  return JSON.stringify(data, null, 2) + "\n";
}

export function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
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
