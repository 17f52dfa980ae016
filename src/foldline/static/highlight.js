// Code in colours, when it is on screen. highlightLater() marks a block of code with its
// language; the block is coloured only once it is on screen (a closed fold's code never is), one
// block per idle moment, by colours.js, which is loaded with import() (with Prism, vendored in
// vendor/prism/) the first time a block is: a page without code on screen never fetches them,
// and the panel's script carries only this module.

const COLOURS_URL = "/static/colours.js";
export const LIMIT = 100_000; // characters: a longer block (a 5 MB output read whole) stays plain

// A fence's info string or a file's extension -> Prism's name for the language.
const NAMES = {
  python: "python", py: "python", pyi: "python", python3: "python", py3: "python",
  javascript: "javascript", js: "javascript", mjs: "javascript", cjs: "javascript", node: "javascript",
  typescript: "typescript", ts: "typescript", mts: "typescript", cts: "typescript",
  jsx: "jsx", tsx: "tsx",
  json: "json", jsonc: "json", json5: "json", jsonl: "json", geojson: "json",
  bash: "bash", sh: "bash", shell: "bash", zsh: "bash", console: "bash", shellscript: "bash",
  yaml: "yaml", yml: "yaml",
  html: "markup", htm: "markup", xml: "markup", svg: "markup", xhtml: "markup", markup: "markup", vue: "markup",
  css: "css", scss: "css", less: "css",
  diff: "diff", patch: "diff",
  go: "go", golang: "go",
  rust: "rust", rs: "rust",
  java: "java",
  c: "c", h: "c",
  cpp: "cpp", "c++": "cpp", cc: "cpp", cxx: "cpp", hpp: "cpp", hh: "cpp", hxx: "cpp",
  csharp: "csharp", cs: "csharp", "c#": "csharp",
  kotlin: "kotlin", kt: "kotlin", kts: "kotlin",
  swift: "swift",
  ruby: "ruby", rb: "ruby",
  sql: "sql", psql: "sql", sqlite: "sql", postgresql: "sql",
  toml: "toml",
  ini: "ini", cfg: "ini", conf: "ini", properties: "ini", env: "ini",
  docker: "docker", dockerfile: "docker",
  markdown: "markdown", md: "markdown", mdx: "markdown",
};

// The language a fence names ("py", "Python", "ts {1,3}"), or null.
export function fenceLanguage(info) {
  const word = String(info ?? "").trim().split(/[\s{]/)[0].toLowerCase();
  return Object.hasOwn(NAMES, word) ? NAMES[word] : null;
}

// The language of a file by its name ("a/b/app.ts", "Dockerfile"), or null.
export function pathLanguage(path) {
  if (typeof path !== "string") return null;
  const name = path.split(/[\\/]/).pop().toLowerCase();
  if (name === "dockerfile" || name.startsWith("dockerfile.")) return "docker";
  const dot = name.lastIndexOf(".");
  const ext = dot > 0 ? name.slice(dot + 1) : "";
  return Object.hasOwn(NAMES, ext) ? NAMES[ext] : null;
}

let colours = null; // a promise of colours.js's colour(), once asked for
function loadColours() {
  if (!colours) {
    // Prism's core would colour every code[class*=language-] of the page by itself unless told
    // to wait (`manual`), and would answer worker messages: neither, here.
    window.Prism = { manual: true, disableWorkerMessageHandler: true };
    const loading = import(COLOURS_URL);
    colours = loading.then((m) => m.colour);
    colours.catch(() => (colours = null)); // a failed load is tried again by the next block
  }
  return colours;
}

let observer = null;
const queue = [];
let idle = false;

function seen(entries) {
  for (const entry of entries) {
    if (!entry.target.isConnected) observer.unobserve(entry.target); // drawn again, or gone
    if (!entry.isIntersecting) continue;
    observer.unobserve(entry.target);
    queue.push(entry.target);
  }
  if (queue.length && !idle) {
    idle = true;
    later(drain);
  }
}

function later(run) {
  if (typeof requestIdleCallback === "function") requestIdleCallback(run, { timeout: 300 });
  else setTimeout(run, 16);
}

async function drain() {
  const node = queue.shift();
  try {
    if (!node || !node.isConnected || node.dataset.coloured) {
      // drawn again, gone, or done
    } else if (node.textContent.length > LIMIT) node.dataset.coloured = "too long";
    else (await loadColours())(node);
  } catch {
    // a block that fails to colour stays plain text
  }
  if (queue.length) later(drain);
  else idle = false;
}

// Colour `node`'s code (its text) in `lang` when it is first on screen; `lines` says how much of
// each line is not code (see colours.js: "plain", "file" or "diff"). Returns the node.
export function highlightLater(node, lang, lines = "plain") {
  if (!lang || typeof IntersectionObserver !== "function") return node;
  node.dataset.lang = lang;
  node.codeLines = lines;
  if (!observer) observer = new IntersectionObserver(seen, { rootMargin: "200px 0px" });
  observer.observe(node);
  return node;
}

