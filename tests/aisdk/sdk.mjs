// The AI SDK itself, for the tests (tests/test_ai_sdk_stream.py): it produces UI message streams
// (`produce NAME MESSAGE_ID`: the SSE bytes an app's route sends, on stdout), assembles one as its
// `readUIMessageStream` does (`assemble --states|--last [START_MESSAGE_FILE]`: SSE on stdin, the
// last state, and every state with --states, on stdout as JSON) and validates messages (`validate`: JSON on stdin, its verdict on stdout).
//
// `--sdk 5|6|7` first (7 without it) picks the major version of the `ai` package that does it:
// package.json installs `ai` 7 as `ai`, 6 as `ai6` and 5 as `ai5`. What differs between them is
// handled here: the mock model (`ai/test`'s MockLanguageModelV2 in 5, V3 in 6, V4 in 7), its
// stream parts (5's usage is flat numbers and its finish reason a string; a file's data is a
// base64 string before 7), and the chunks an app's writer may send (`since`: 5 has no approvals,
// 6 no approval response chunk, and the chunks and fields 7 added are sent to 7 only).
import { readFileSync } from 'node:fs';
import { z } from 'zod';

const cli = process.argv.slice(2);
const VERSION = cli[0] === '--sdk' ? Number(cli.splice(0, 2)[1]) : 7;
const PACKAGE = { 5: 'ai5', 6: 'ai6', 7: 'ai' }[VERSION];
if (!PACKAGE) {
  process.stderr.write(`sdk.mjs: --sdk must be 5, 6 or 7, not ${VERSION}\n`);
  process.exit(2);
}
const {
  createUIMessageStream,
  dynamicTool,
  JsonToSseTransformStream,
  parseJsonEventStream,
  parsePartialJson,
  readUIMessageStream,
  safeValidateUIMessages,
  simulateReadableStream,
  stepCountIs,
  streamText,
  tool,
  uiMessageChunkSchema,
} = await import(PACKAGE);
const mocks = await import(`${PACKAGE}/test`);
const MockLanguageModel = { 5: mocks.MockLanguageModelV2, 6: mocks.MockLanguageModelV3, 7: mocks.MockLanguageModelV4 }[VERSION];

// `value` from AI SDK `version` on (a chunk, or an object of fields to spread), else nothing.
function since(version, value) {
  return VERSION >= version ? value : undefined;
}

// The model's usage and finish: LanguageModelV2's flat numbers and reason string in 5, V3's and
// V4's token breakdowns and unified reason from 6.
const usage = VERSION === 5
  ? { inputTokens: 12, outputTokens: 30, totalTokens: 42, reasoningTokens: 10, cachedInputTokens: 0 }
  : { inputTokens: { total: 12, noCache: 12, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 30, text: 20, reasoning: 10 } };
const finish = reason => ({ type: 'finish', finishReason: VERSION === 5 ? reason : { unified: reason, raw: reason }, usage });
// A file's data: a base64 string (or bytes) in V2 and V3, tagged `{ type: 'data', data }` in V4.
const fileData = base64 => (VERSION >= 7 ? { type: 'data', data: base64 } : base64);

function pieces(text, size) {
  const out = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out;
}

// A model that thinks, answers, cites, streams three tool calls' inputs and, in its second step, sums up.
function agentModel(big) {
  const command = JSON.stringify({ command: 'ls -la /srv && echo "done"' });
  const read = JSON.stringify({ path: 'README.md' });
  const grep = JSON.stringify({ pattern: 'TODO', path: 'src' });
  const search = JSON.stringify({ query: 'flaky test' });
  const write = JSON.stringify({ path: 'notes.txt', content: 'hello' });
  const step1 = [
    { type: 'stream-start', warnings: [] },
    { type: 'response-metadata', id: 'resp-1', modelId: 'mock-model-id', timestamp: new Date(0) },
    { type: 'reasoning-start', id: 'r1' },
    ...pieces('The build fails; list the folder first, then read the README.', 7).map(delta => ({ type: 'reasoning-delta', id: 'r1', delta })),
    { type: 'reasoning-end', id: 'r1', providerMetadata: { mock: { signature: 'sig-1' } } },
    { type: 'text-start', id: 't1' },
    ...pieces('Let me look at the folder. ', 4).map(delta => ({ type: 'text-delta', id: 't1', delta })),
    { type: 'text-end', id: 't1' },
    { type: 'source', sourceType: 'url', id: 'src-1', url: 'https://example.com/build', title: 'Build docs' },
    { type: 'source', sourceType: 'document', id: 'src-2', mediaType: 'text/plain', title: 'Runbook', filename: 'runbook.txt' },
    { type: 'file', mediaType: 'image/png', data: fileData('iVBORw0KGgo=') },
    { type: 'tool-input-start', id: 'call-bash', toolName: 'bash' },
    ...pieces(command, 5).map(delta => ({ type: 'tool-input-delta', id: 'call-bash', delta })),
    { type: 'tool-input-end', id: 'call-bash' },
    { type: 'tool-call', toolCallId: 'call-bash', toolName: 'bash', input: command },
    { type: 'tool-input-start', id: 'call-read', toolName: 'read_file' },
    ...pieces(read, 3).map(delta => ({ type: 'tool-input-delta', id: 'call-read', delta })),
    { type: 'tool-input-end', id: 'call-read' },
    { type: 'tool-call', toolCallId: 'call-read', toolName: 'read_file', input: read },
    { type: 'tool-call', toolCallId: 'call-grep', toolName: 'grep', input: grep },
    { type: 'tool-call', toolCallId: 'call-mcp', toolName: 'mcp__docs__search', input: search },
    finish('tool-calls'),
  ];
  const step2 = [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't2' },
    ...pieces(big ? 'x'.repeat(200_000) : 'The folder holds the build script; I would like to write a note.', 6)
      .map(delta => ({ type: 'text-delta', id: 't2', delta })),
    { type: 'text-end', id: 't2' },
    { type: 'tool-call', toolCallId: 'call-write', toolName: 'write_file', input: write },
    finish('tool-calls'),
  ];
  return new MockLanguageModel({
    doStream: [step1, step2].map(chunks => ({ stream: simulateReadableStream({ chunks, chunkDelayInMs: 0 }) })),
  });
}

function agentStream(messageId, big, result_only = false) {
  const result = streamText({
    model: agentModel(big),
    prompt: 'Why does the build fail?',
    stopWhen: stepCountIs(2),
    tools: {
      bash: tool({
        inputSchema: z.object({ command: z.string() }),
        execute: async () => (big ? 'line of output\n'.repeat(20_000) : 'total 8\nbuild.sh\ndone\n'),
      }),
      read_file: tool({
        inputSchema: z.object({ path: z.string() }),
        async *execute() {
          yield 'reading…';
          yield '# Read me';
        },
      }),
      grep: tool({
        inputSchema: z.object({ pattern: z.string(), path: z.string() }),
        execute: async () => {
          throw new Error('grep: src: No such file or directory');
        },
      }),
      mcp__docs__search: dynamicTool({
        inputSchema: z.object({ query: z.string() }),
        execute: async () => ({ hits: ['flaky test in CI'] }),
      }),
      write_file: tool({
        inputSchema: z.object({ path: z.string(), content: z.string() }),
        needsApproval: true, // from 6: 5 has no approvals, and runs it
        execute: async () => 'written',
      }),
    },
  });
  if (result_only) return result;
  return result.toUIMessageStream({
    generateMessageId: () => messageId,
    sendReasoning: true,
    sendSources: true,
    messageMetadata: ({ part }) =>
      part.type === 'start' ? { model: 'mock-model-id', source: 'ai-sdk-app' }
        : part.type === 'finish' ? { usage: { inputTokens: 24, outputTokens: 60 } } : undefined,
  });
}

// Every other chunk an app's own writer may send, through the SDK's createUIMessageStream: those
// of the version's chunk schema, with its fields (`since`).
function writerStream(messageId) {
  return createUIMessageStream({
    generateId: () => messageId,
    execute: ({ writer }) => {
      const write = chunk => chunk && writer.write(chunk);
      write({ type: 'start', messageId, messageMetadata: { model: 'writer', tags: { a: 1 } } });
      write({ type: 'start-step' });
      write({ type: 'data-progress', id: 'p1', data: { done: 1, of: 3 } });
      write({ type: 'data-progress', id: 'p1', data: { done: 3, of: 3 } });
      write({ type: 'data-note', data: 'no id: pushed' });
      write({ type: 'data-toast', data: 'transient: never stored', transient: true });
      write({ type: 'message-metadata', messageMetadata: { tags: { b: 2 } } });
      write(since(7, { type: 'custom', kind: 'mock.marker', providerMetadata: { mock: { at: 1 } } }));
      write(since(7, { type: 'reasoning-file', mediaType: 'image/png', url: 'data:image/png;base64,iVBORw0KGgo=' }));
      write(since(7, { type: 'steering-message', id: 'steer-1', parts: [{ type: 'text', text: 'focus on the test' }] }));
      write({ type: 'tool-input-start', toolCallId: 'bad-1', toolName: 'bash', ...since(6, { title: 'Shell' }) });
      write({ type: 'tool-input-delta', toolCallId: 'bad-1', inputTextDelta: '{"command": ' });
      write({ type: 'tool-input-error', toolCallId: 'bad-1', toolName: 'bash', input: '{"command": ', errorText: 'bad JSON' });
      write({ type: 'tool-input-error', toolCallId: 'bad-2', toolName: 'mcp__x', dynamic: true, input: 'zzz', errorText: 'no such tool' });
      write({ type: 'tool-input-available', toolCallId: 'ask-1', toolName: 'bash', input: { command: 'rm -rf build' }, providerMetadata: { mock: { x: 1 } } });
      // An approval and its answer in one stream: 7's. In 6 the answer comes with the next request
      // (the ask and answer streams), so ask-1 waits here; 5 has no approvals.
      write(since(6, { type: 'tool-approval-request', approvalId: 'ap-1', toolCallId: 'ask-1', signature: 'hmac', ...since(7, { isAutomatic: false }) }));
      write(since(7, { type: 'tool-approval-response', approvalId: 'ap-1', approved: false, reason: 'too risky' }));
      write(since(7, { type: 'tool-output-denied', toolCallId: 'ask-1' }));
      write({ type: 'tool-input-available', toolCallId: 'ask-2', toolName: 'bash', input: { command: 'make' } });
      write(since(7, { type: 'tool-approval-request', approvalId: 'ap-2', toolCallId: 'ask-2', reason: 'runs make' }));
      write(since(7, { type: 'tool-approval-response', approvalId: 'ap-2', approved: true }));
      write({ type: 'tool-output-available', toolCallId: 'ask-2', output: 'built', ...since(6, { providerMetadata: { mock: { ms: 5 } } }) });
      write({ type: 'tool-input-start', toolCallId: 'dyn-1', toolName: 'mcp__fs__list', dynamic: true, providerExecuted: true });
      write({ type: 'tool-input-delta', toolCallId: 'dyn-1', inputTextDelta: '{"dir":"/' });
      write({ type: 'tool-input-delta', toolCallId: 'dyn-1', inputTextDelta: 'tmp"}' });
      write({ type: 'tool-input-available', toolCallId: 'dyn-1', toolName: 'mcp__fs__list', dynamic: true, input: { dir: '/tmp' } });
      // 5 finds a dynamic call's part only when the chunk says `dynamic` (as its streamText does); 6 and 7 by its id.
      write({ type: 'tool-output-error', toolCallId: 'dyn-1', errorText: 'EACCES', ...(VERSION === 5 ? { dynamic: true } : {}) });
      write({ type: 'text-start', id: 'gone' });
      write({ type: 'text-delta', id: 'gone', delta: 'this step is reset' });
      write({ type: 'finish-step' });
      write({ type: 'start-step' });
      write(since(7, { type: 'text-start', id: 'gone-too' }));
      write(since(7, { type: 'text-delta', id: 'gone-too', delta: 'dropped by reset-step' }));
      write(since(7, { type: 'reset-step' }));
      write({ type: 'text-start', id: 'kept', providerMetadata: { mock: { lang: 'en' } } });
      write({ type: 'text-delta', id: 'kept', delta: 'After the reset.' });
      write({ type: 'text-end', id: 'kept', ...since(7, { citations: [] }) });
      write({ type: 'source-url', sourceId: 's-1', url: 'https://example.com', title: 'Example' });
      write({ type: 'source-document', sourceId: 's-2', mediaType: 'application/pdf', title: 'Spec' });
      write({ type: 'file', mediaType: 'text/plain', url: 'data:text/plain;base64,aGk=' });
      write({ type: 'error', errorText: 'a recoverable error' });
      write({ type: 'finish-step' });
      write({ type: 'finish', finishReason: 'stop', messageMetadata: { tags: { c: 3 } } });
    },
  });
}

// A tool call whose output streams (preliminary outputs), and a long text: a follower sees them grow.
function growingStream(messageId) {
  return createUIMessageStream({
    execute: ({ writer }) => {
      writer.write({ type: 'start', messageId });
      writer.write({ type: 'start-step' });
      writer.write({ type: 'tool-input-start', toolCallId: 'grow', toolName: 'bash' });
      for (const delta of pieces(JSON.stringify({ command: 'yes | head -n 25000' }), 4)) {
        writer.write({ type: 'tool-input-delta', toolCallId: 'grow', inputTextDelta: delta });
      }
      writer.write({ type: 'tool-input-available', toolCallId: 'grow', toolName: 'bash', input: { command: 'yes | head -n 25000' } });
      for (let lines = 2500; lines <= 25000; lines += 2500) {
        writer.write({ type: 'tool-output-available', toolCallId: 'grow', output: 'y\n'.repeat(lines), preliminary: lines < 25000 });
      }
      writer.write({ type: 'text-start', id: 'answer' });
      for (const delta of pieces('word '.repeat(4000), 5)) writer.write({ type: 'text-delta', id: 'answer', delta });
      writer.write({ type: 'text-end', id: 'answer' });
      writer.write({ type: 'finish-step' });
      writer.write({ type: 'finish', finishReason: 'stop' });
    },
  });
}

// A turn that asks to run two commands and waits; the next request's stream, for the same message,
// brings the answers (7; in 6 they are only in the request's messages) and the outcomes: one run,
// one denied (the stream goes on from the stored message).
function chunksStream(chunks) {
  return createUIMessageStream({ execute: ({ writer }) => chunks.forEach(chunk => chunk && writer.write(chunk)) });
}

function askStream(messageId) {
  return chunksStream([
    { type: 'start', messageId },
    { type: 'start-step' },
    { type: 'text-start', id: 'a' },
    { type: 'text-delta', id: 'a', delta: 'May I run make?' },
    { type: 'text-end', id: 'a' },
    { type: 'tool-input-available', toolCallId: 'ask-9', toolName: 'bash', input: { command: 'make' } },
    { type: 'tool-approval-request', approvalId: 'ap-9', toolCallId: 'ask-9' }, // from 6
    { type: 'tool-input-available', toolCallId: 'ask-8', toolName: 'bash', input: { command: 'rm -rf build' } },
    { type: 'tool-approval-request', approvalId: 'ap-8', toolCallId: 'ask-8' },
    { type: 'finish-step' },
    { type: 'finish', finishReason: 'tool-calls' },
  ]);
}

function answerStream(messageId) {
  return chunksStream([
    { type: 'start', messageId },
    // 7's stream says the answers; in 6 they are only in the request's messages.
    since(7, { type: 'tool-approval-response', approvalId: 'ap-9', approved: true }),
    since(7, { type: 'tool-approval-response', approvalId: 'ap-8', approved: false, reason: 'no' }),
    { type: 'tool-output-available', toolCallId: 'ask-9', output: 'make: done' },
    { type: 'tool-output-denied', toolCallId: 'ask-8' },
    { type: 'start-step' },
    { type: 'text-start', id: 'b' },
    { type: 'text-delta', id: 'b', delta: 'Built.' },
    { type: 'text-end', id: 'b' },
    { type: 'finish-step' },
    { type: 'finish', finishReason: 'stop' },
  ]);
}

// A stream stopped by its app (the user pressed stop): `abort`, and no `finish`.
function abortedStream(messageId) {
  return chunksStream([
    { type: 'start', messageId },
    { type: 'start-step' },
    { type: 'text-start', id: 'a' },
    { type: 'text-delta', id: 'a', delta: 'Running the tests' },
    { type: 'tool-input-start', toolCallId: 'run-1', toolName: 'bash' },
    { type: 'tool-input-delta', toolCallId: 'run-1', inputTextDelta: '{"command": "pytest -' },
    { type: 'abort', ...since(6, { reason: 'stopped by the user' }) },
  ]);
}

async function toStdout(stream) {
  const reader = stream.pipeThrough(new JsonToSseTransformStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    process.stdout.write(value);
  }
}

function stdinText() {
  return readFileSync(0, 'utf8');
}

async function assemble(keep, startFile) {
  const message = startFile ? JSON.parse(readFileSync(startFile, 'utf8')) : undefined;
  const bytes = new TextEncoder().encode(stdinText());
  const body = new ReadableStream({ start(c) { c.enqueue(bytes); c.close(); } });
  // As DefaultChatTransport reads a response: the events parsed, each chunk checked by the SDK's schema.
  const chunks = parseJsonEventStream({ stream: body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(result, controller) {
        if (!result.success) throw result.error;
        controller.enqueue(result.value);
      },
    }),
  );
  const states = [];
  const errors = []; // an `error` chunk is told to onError, as a chat's onError hears it
  let last = null;
  for await (const state of readUIMessageStream({ stream: chunks, message, onError: e => errors.push(String(e)) })) {
    if (keep) states.push(state);
    last = state;
  }
  process.stdout.write(JSON.stringify({ ...(keep ? { states } : {}), last, errors }));
}

async function validate() {
  const messages = JSON.parse(stdinText());
  const result = await safeValidateUIMessages({ messages });
  process.stdout.write(JSON.stringify(result.success ? { ok: true, data: result.data } : { ok: false, error: String(result.error) }));
}

// An app's chat route as docs/ai-sdk.md writes it: the answer streamed to the browser (read here
// whole, as a browser would), and its copy sent to Foldline by consumeSseStream.
async function app(agentId, messageId) {
  const FOLDLINE = process.env.FOLDLINE_URL;
  const TOKEN = process.env.FOLDLINE_TOKEN;
  let stored;
  const result = agentStream(messageId, false, true);
  const response = result.toUIMessageStreamResponse({
    generateMessageId: () => messageId,
    sendReasoning: true,
    sendSources: true,
    consumeSseStream: ({ stream }) => {
      stored = fetch(`${FOLDLINE}/api/agents/${agentId}/stream`, {
        method: 'POST', duplex: 'half', body: stream.pipeThrough(new TextEncoderStream()),
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/event-stream' } });
    },
  });
  const browser = await response.text();
  const answer = await (await stored).json();
  process.stdout.write(JSON.stringify({ browser, answer }));
}

const [command, ...args] = cli;
if (command === 'produce') {
  const [name, messageId] = args;
  const streams = {
    agent: () => agentStream(messageId, false),
    big: () => agentStream(messageId, true),
    writer: () => writerStream(messageId),
    growing: () => growingStream(messageId),
    ask: () => askStream(messageId),
    answer: () => answerStream(messageId),
    aborted: () => abortedStream(messageId),
  };
  if (VERSION < 6 && (name === 'ask' || name === 'answer')) {
    process.stderr.write(`sdk.mjs: AI SDK ${VERSION} has no tool approvals (no tool-approval-request chunk)\n`);
    process.exit(2);
  }
  await toStdout(streams[name]());
} else if (command === 'assemble') {
  await assemble(args[0] === '--states', args[1]);
} else if (command === 'app') {
  await app(args[0], args[1]);
} else if (command === 'partial') {
  // Each text read as a streaming tool input is: [state, value] (value absent: undefined).
  const texts = JSON.parse(stdinText());
  const out = [];
  for (const text of texts) {
    const { value, state } = await parsePartialJson(text);
    out.push(value === undefined ? [state] : [state, value]);
  }
  process.stdout.write(JSON.stringify(out));
} else if (command === 'validate') {
  await validate();
} else {
  process.stderr.write('usage: sdk.mjs [--sdk 5|6|7] produce NAME MESSAGE_ID | assemble --states|--last [START] | validate\n');
  process.exit(2);
}
