// Worker thread (plain JS, no loader needed): the official TypeScript schema extraction of one graph
// (@langchain/langgraph-api's getStaticGraphSchema, run in this thread), recording the files the compiler read.
// One fresh worker per graph, as the official server does: TypeScript's symbol ids (which show in schemas, as in
// `__@toStringTag@913`) are counted per loaded compiler, so a compiler reused for another graph would differ.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";

/** @type {{ schemaModule: string, typescript: string, spec: { sourceFile: string, exportSymbol: string } }} */
const { schemaModule, typescript, spec } = workerData;

// The parser prints the program's diagnostics and its warnings: they go to the server's logger instead.
const output = [];
for (const level of ["log", "info", "warn", "error", "debug"]) {
  globalThis.console[level] = (...args) => output.push({ level, text: args.map(String).join(" ") });
}

// The compiler the parser imports (the same module instance): what it reads (with the hash of its bytes), and what
// it looked for in vain outside node_modules (a file created there could change how an import resolves).
const ts = createRequire(import.meta.url)(typescript);
const read = new Map();
const missing = new Set();
const readFile = ts.sys.readFile.bind(ts.sys);
const fileExists = ts.sys.fileExists.bind(ts.sys);
ts.sys.readFile = (file, encoding) => {
  const text = readFile(file, encoding);
  if (text !== undefined && !read.has(file)) {
    read.set(file, createHash("sha256").update(readFileSync(file)).digest("hex"));
  }
  return text;
};
ts.sys.fileExists = (file) => {
  const exists = fileExists(file);
  if (!exists && !/[\\/]node_modules[\\/]/.test(file)) missing.add(file);
  return exists;
};

try {
  const { getStaticGraphSchema } = await import(schemaModule);
  const result = await getStaticGraphSchema(spec, { mainThread: true });
  parentPort.postMessage({ result, read: Object.fromEntries(read), missing: [...missing], output });
} catch (e) {
  // The message for the server's warning; the stack only for its debug log (a plain JavaScript graph's extraction
  // fails inside the compiler on every start, which is not a crash).
  const stack = e && e.stack ? String(e.stack) : undefined;
  parentPort.postMessage({ error: String((e && e.message) || e), stack, output });
}
