// Lint configuration: recommended JS and TypeScript rules over the whole package, and the import check that
// keeps the layers of src/ importing downward only (README "Layout").
import { posix } from "node:path";
import js from "@eslint/js";
import tseslint from "typescript-eslint";

/**
 * The layers of src/, top to bottom: each may import from the layers below it, never from one above. A layer is
 * a set of folders (or, for `server`, the file src/server.ts).
 */
const LAYERS = [
  { name: "cli", dirs: ["cli"] },
  { name: "server.ts", dirs: ["server"] },
  { name: "api", dirs: ["api"] },
  { name: "control-plane", dirs: ["control-plane"] },
  { name: "runs/graphs/auth", dirs: ["runs", "graphs", "auth"] },
  { name: "streams", dirs: ["streams"] },
  { name: "storage", dirs: ["storage"] },
  { name: "lib", dirs: ["lib"] },
];

/** Imports a layer may not make although they point downward (siblings kept apart, HTTP kept out of domain). */
const EXTRA = {
  // The control plane's store has its own queries; what it shares with storage/ lives in lib/db/.
  "control-plane": [{ dirs: ["storage"], why: "the helpers it shares with storage/ live in lib/db/" }],
  // Only the HTTP layers (api/, the control plane's http part) map errors to statuses.
  "runs/graphs/auth": [{ dirs: ["lib/http-errors"], why: "only the HTTP layers map errors to statuses" }],
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
  LAYERS.forEach((layer, i) => {
    const above = LAYERS.slice(0, i).flatMap((l) => l.dirs.map((dir) => ({ dir, layer: l.name })));
    const extra = EXTRA[layer.name] ?? [];
    for (let depth = 0; depth <= MAX_DEPTH; depth++) {
      const files = filesAt(layer.dirs, depth);
      if (!files.length) continue;
      const forbidden = [
        ...above.map(({ dir, layer: over }) => ({
          regex: reaching([dir], depth),
          message: `${layer.name} must not import ${over} (a layer above it): move what both need below both.`,
        })),
        ...extra.map(({ dirs, why }) => ({
          regex: reaching(dirs, depth),
          message: `${layer.name} must not import ${dirs.join(", ")}: ${why}.`,
        })),
      ];
      if (layer.name === "storage") {
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
      if (layer.name === "control-plane") blocks.push(...controlPlaneRules(depth, common));
      for (const f of forbidden.filter((f) => f.from)) {
        blocks.push(restrict([`src/storage/${f.from}/${"*/".repeat(depth - 2)}*.ts`], [...common, f]));
      }
    }
  });
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
