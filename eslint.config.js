// Lint configuration: recommended JS and TypeScript rules over the whole package, and the import check that
// keeps the layers of src/ importing downward only (README "Layout").
import { readdirSync } from "node:fs";
import { dirname, posix } from "node:path";
import { fileURLToPath } from "node:url";
import js from "@eslint/js";
import tseslint from "typescript-eslint";

/**
 * The parts of src/ (folders, and `server` for the file src/server.ts) and the parts each may import, named one by
 * one: an import of any other part is an error, and a folder or file of src/ that is not a part here fails the lint
 * (a new folder is checked from its first commit, never skipped). The edges must stay acyclic (checked below):
 * top to bottom, cli, server.ts, then api and backends, the control plane, runs, graphs and auth, streams, storage,
 * lib. A run's path: api -> runs (service, queue) -> runs (worker) -> storage, events runs -> streams -> api.
 */
const PARTS = {
  // `hangar encryption reencrypt` rewrites the event logs in Redis (streams/redis-reseal.ts).
  cli: ["server", "api", "control-plane", "auth", "graphs", "streams", "storage", "lib"],
  server: ["api", "backends", "runs", "graphs", "auth", "streams", "storage", "lib"],
  // A backend assembles a storage, a run queue and a broker (src/backends/types.ts).
  backends: ["runs", "streams", "storage", "lib"],
  api: ["runs", "graphs", "auth", "streams", "storage", "lib"],
  "control-plane": ["lib"],
  runs: ["graphs", "auth", "streams", "storage", "lib"],
  graphs: ["auth", "storage", "lib"],
  auth: ["storage", "lib"],
  streams: ["lib"],
  storage: ["lib"],
  lib: [],
};

/** Fails the lint when src/ holds a part PARTS does not name, or when PARTS names an edge that closes a cycle. */
function checkParts() {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const entry of readdirSync(`${here}/src`, { withFileTypes: true })) {
    const name = entry.isDirectory() ? entry.name : entry.name.replace(/\.ts$/, "");
    if (!(name in PARTS)) {
      throw new Error(`eslint.config.js: src/${entry.name} is not in PARTS: say which parts it may import`);
    }
  }
  const visiting = new Set();
  const done = new Set();
  const visit = (part, path) => {
    if (done.has(part)) return;
    if (visiting.has(part))
      throw new Error(`eslint.config.js: PARTS has a cycle: ${[...path, part].join(" -> ")}`);
    visiting.add(part);
    for (const next of PARTS[part]) visit(next, [...path, part]);
    visiting.delete(part);
    done.add(part);
  };
  for (const part of Object.keys(PARTS)) visit(part, []);
}

/** Imports a part may not make although PARTS lets it reach the folder (siblings kept apart, HTTP kept out of domain). */
const EXTRA = {
  // The control plane's store has its own queries; what it shares with storage/ lives in lib/db/.
  "control-plane": [{ dirs: ["storage"], why: "the helpers it shares with storage/ live in lib/db/" }],
  // Only the HTTP layers (api/, the control plane's http part) map errors to statuses.
  runs: [{ dirs: ["lib/http-errors"], why: "only the HTTP layers map errors to statuses" }],
  graphs: [{ dirs: ["lib/http-errors"], why: "only the HTTP layers map errors to statuses" }],
  auth: [{ dirs: ["lib/http-errors"], why: "only the HTTP layers map errors to statuses" }],
  backends: [{ dirs: ["lib/http-errors"], why: "only the HTTP layers map errors to statuses" }],
  streams: [{ dirs: ["lib/http-errors"], why: "only the HTTP layers map errors to statuses" }],
  storage: [{ dirs: ["lib/http-errors"], why: "only the HTTP layers map errors to statuses" }],
};

/**
 * The parts of src/control-plane, top to bottom, under the same rule (a part imports only from the parts below
 * it). `dirs` are paths below src/control-plane; "server" and "admin" are its files server.ts and admin.ts. The
 * two runtimes are one layer whose folders never import each other (what both need lives in domain/).
 */
const CP_LAYERS = [
  { name: "control-plane/server.ts, admin.ts", dirs: ["server", "admin"], files: true },
  { name: "control-plane/http", dirs: ["http"] },
  { name: "control-plane/runtime", dirs: ["runtime/local", "runtime/k8s"], apart: true },
  { name: "control-plane/store", dirs: ["store"] },
  { name: "control-plane/domain", dirs: ["domain"] },
];

const MAX_DEPTH = 6;
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A regex matching an import specifier, written from a file `depth` folders below src/, that reaches one of
 * `dirs` (folders or files of src/, extension-less): "../api/errors.js" from src/runs/x.ts, "./api/app.js" from
 * src/server.ts.
 */
function reaching(dirs, depth) {
  const up = depth === 0 ? "\\./" : `(?:\\.\\./){${depth}}`;
  return `^${up}(?:${dirs.map(escape).join("|")})(?:/|\\.[jt]s$|$)`;
}

/** Files of `dirs` exactly `depth` folders below src/ (src/server.ts is the file of "server"). */
function filesAt(dirs, depth) {
  if (depth === 0) return dirs.includes("server") ? ["src/server.ts"] : [];
  return dirs.filter((d) => d !== "server").map((d) => `src/${d}/${"*/".repeat(depth - 1)}*.ts`);
}

/**
 * Regexes matching an import specifier, written from a file `extra` folders below src/control-plane/`from`, that
 * reaches src/control-plane/`to`: the shortest relative path ("../k8s/x.js" from runtime/local) and the one up
 * to src/control-plane and down again ("../../runtime/k8s/x.js").
 */
function reachingPart(from, extra, to) {
  const up = "(?:\\.\\./)".repeat(extra);
  const short = posix.relative(from, to);
  const viaRoot = `${"../".repeat(from.split("/").length)}${to}`;
  const paths = [...new Set([short, viaRoot])].map(escape).join("|");
  return `^${up}(?:${paths})(?:/|\\.[jt]s$|$)`;
}

/**
 * Blocks for the parts of src/control-plane at `depth` folders below src/, each repeating `common` (the rules of
 * the control-plane layer as a whole at that depth: a later block replaces an earlier one's options).
 */
function controlPlaneRules(depth, common) {
  const blocks = [];
  CP_LAYERS.forEach((layer, i) => {
    if (layer.files) return; // the top: may import every part
    const above = CP_LAYERS.slice(0, i).flatMap((l) => l.dirs.map((dir) => ({ dir, layer: l.name })));
    for (const from of layer.dirs) {
      const extra = depth - 1 - from.split("/").length;
      if (extra < 0) continue;
      const forbidden = above.map(({ dir, layer: over }) => ({
        regex: reachingPart(from, extra, dir),
        message: `${layer.name} must not import ${over} (a part above it): move what both need below both.`,
      }));
      if (layer.apart) {
        for (const sibling of layer.dirs.filter((d) => d !== from)) {
          forbidden.push({
            regex: reachingPart(from, extra, sibling),
            message: `control-plane/${from} must not import control-plane/${sibling}: share the common part in domain/.`,
          });
        }
      }
      blocks.push(
        restrict([`src/control-plane/${from}/${"*/".repeat(extra)}*.ts`], [...common, ...forbidden]),
      );
    }
  });
  return blocks;
}

function layerRules() {
  const blocks = [];
  checkParts();
  for (const [part, may] of Object.entries(PARTS)) {
    const others = Object.keys(PARTS).filter((p) => p !== part && !may.includes(p));
    const extra = EXTRA[part] ?? [];
    const name = part === "server" ? "server.ts" : part;
    for (let depth = 0; depth <= MAX_DEPTH; depth++) {
      const files = filesAt([part], depth);
      if (!files.length) continue;
      const forbidden = [
        ...others.map((other) => ({
          regex: reaching([other], depth),
          message: `${name} may import only ${may.join(", ") || "nothing of src/"} (eslint.config.js PARTS), not ${other === "server" ? "server.ts" : other}.`,
        })),
        ...extra.map(({ dirs, why }) => ({
          regex: reaching(dirs, depth),
          message: `${name} must not import ${dirs.join(", ")}: ${why}.`,
        })),
      ];
      if (part === "storage") {
        // The two backends share through storage/ itself (or lib/), never one through the other.
        for (const [from, to] of [
          ["sqlite", "postgres"],
          ["postgres", "sqlite"],
        ]) {
          if (depth < 2) continue;
          forbidden.push({
            regex: `^(?:\\.\\./){${depth - 1}}${to}(?:/|$)`,
            message: `storage/${from} must not import storage/${to}: share the common part in storage/ or lib/.`,
            from,
          });
        }
      }
      // A later block replaces an earlier one's options for the same file: each backend's block repeats the rest.
      const common = forbidden.filter((f) => !f.from);
      blocks.push(restrict(files, common));
      if (part === "control-plane") blocks.push(...controlPlaneRules(depth, common));
      for (const f of forbidden.filter((f) => f.from)) {
        blocks.push(restrict([`src/storage/${f.from}/${"*/".repeat(depth - 2)}*.ts`], [...common, f]));
      }
    }
  }
  return blocks;
}

/** One config block: static imports (and re-exports) through no-restricted-imports, import() through syntax. */
function restrict(files, patterns) {
  return {
    files,
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: patterns.map(({ regex, message }) => ({ regex, message, caseSensitive: true })) },
      ],
      "no-restricted-syntax": [
        "error",
        ...patterns.map(({ regex, message }) => ({
          selector: `ImportExpression > Literal[value=/${regex.replace(/\//g, "\\/")}/]`,
          message,
        })),
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "**/.hangar/", ".langgraph_api/", "bench/.peer/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["bin/**/*.js", "scripts/**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } },
  },
  ...layerRules(),
);
