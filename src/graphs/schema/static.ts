// Extracts a graph's JSON schemas from its TypeScript source with the compiler API: state, input, output and
// config types of the exported graph and of the subgraphs its nodes call (found through `addNode`).
import { dirname, join } from "node:path";
import ts from "typescript";
import { TypeToJsonSchema } from "./ts-json.js";
import type { GraphSchema, StaticGraphSchemas } from "./types.js";

const KINDS = ["state", "input", "output", "config"] as const;

/** Type helpers of the generated file: the graph's types as LangGraph declares them. */
const HELPERS = `
import type { UpdateType as __Upd, StateType as __St, StateDefinition as __SD } from "@langchain/langgraph";
type __Unwrap<T> = T extends (...args: any[]) => infer R ? Awaited<R> : Awaited<T>;
type __Compiled<T> = __Unwrap<T> extends { compile(...args: any[]): infer C } ? C : __Unwrap<T>;
type __Builder<T> = __Compiled<T> extends { builder: infer B } ? B : never;
type __NoAny<T> = 0 extends 1 & T ? never : T;
type __state<T> = __NoAny<__Compiled<T> extends { "~RunInput": infer U } ? U
  : __Compiled<T> extends { "~InputType": infer U } ? U : never>;
type __input<T> = __NoAny<__Builder<T> extends { _inputDefinition: infer I extends __SD } ? __Upd<I> : never>;
type __output<T> = __NoAny<__Builder<T> extends { _outputDefinition: infer O extends __SD } ? __St<O> : never>;
type __config<T> = __NoAny<__Builder<T> extends { _configSchema?: infer C extends __SD | undefined }
  ? __Upd<Exclude<C, undefined>> : never>;
`;

interface Target {
  /** Namespace of the subgraph ("" for the exported graph), e.g. "child|grandchild". */
  ns: string;
  /** Type expression naming the graph's value in the generated file. */
  typeExpr: string;
}

function compilerOptions(sourceFile: string): ts.CompilerOptions {
  let base: ts.CompilerOptions = {};
  const configPath = ts.findConfigFile(dirname(sourceFile), ts.sys.fileExists, "tsconfig.json");
  if (configPath) {
    const read = ts.readConfigFile(configPath, ts.sys.readFile);
    if (!read.error) base = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(configPath)).options;
  }
  return {
    ...base,
    noEmit: true,
    strict: true,
    skipLibCheck: true,
    allowJs: true,
    allowImportingTsExtensions: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    composite: false,
    incremental: false,
    declaration: false,
  };
}

/** A compiler host with a shared parse cache and in-memory overrides of some files' text. */
function makeHost(
  options: ts.CompilerOptions,
  overrides: Map<string, string>,
  cache: Map<string, ts.SourceFile>,
) {
  const host = ts.createCompilerHost(options, true);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, lang, onError, create) => {
    const text = overrides.get(fileName);
    if (text !== undefined) return ts.createSourceFile(fileName, text, lang, true);
    const hit = cache.get(fileName);
    if (hit) return hit;
    const sf = getSourceFile(fileName, lang, onError, create);
    if (sf) cache.set(fileName, sf);
    return sf;
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (f) => overrides.has(f) || fileExists(f);
  const readFile = host.readFile.bind(host);
  host.readFile = (f) => overrides.get(f) ?? readFile(f);
  return host;
}

const isGraphType = (checker: ts.TypeChecker, type: ts.Type) =>
  !!checker.getPropertyOfType(type, "invoke") &&
  (!!checker.getPropertyOfType(type, "lg_is_pregel") || !!checker.getPropertyOfType(type, "compile"));

/** Finds `addNode("name", subgraph)` calls reachable from the exported graph, recursively. */
class SubgraphFinder {
  readonly found: { ns: string; decl: ts.VariableDeclaration }[] = [];
  private seen = new Set<ts.Node>();

  constructor(private checker: ts.TypeChecker) {}

  /** The variable declaration an identifier refers to (through imports), when it holds a graph. */
  graphVariable(id: ts.Identifier): ts.VariableDeclaration | undefined {
    let sym = this.checker.getSymbolAtLocation(id);
    if (sym && sym.flags & ts.SymbolFlags.Alias) sym = this.checker.getAliasedSymbol(sym);
    const decl = sym?.valueDeclaration;
    if (!decl || !ts.isVariableDeclaration(decl)) return undefined;
    return isGraphType(this.checker, this.checker.getTypeAtLocation(decl)) ? decl : undefined;
  }

  /** Walks a graph's definition: its initializer and the statements of its file that call methods on it. */
  visitGraph(decl: ts.VariableDeclaration, ns: string[]): void {
    if (this.seen.has(decl)) return;
    this.seen.add(decl);
    const roots: ts.Node[] = decl.initializer ? [decl.initializer] : [];
    const name = ts.isIdentifier(decl.name) ? decl.name.text : undefined;
    for (const st of decl.getSourceFile().statements) {
      if (name && ts.isExpressionStatement(st) && leftmost(st.expression) === name) roots.push(st);
    }
    for (const root of roots) this.scan(root, ns);
  }

  private scan(node: ts.Node, ns: string[]): void {
    const visit = (n: ts.Node): void => {
      if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)) {
        if (n.expression.name.text === "addNode") this.addNode(n, ns);
      }
      // A graph built from another variable (`const graph = workflow.compile()`).
      if (ts.isIdentifier(n) && !(ts.isPropertyAccessExpression(n.parent) && n.parent.name === n)) {
        const v = this.graphVariable(n);
        if (v) this.visitGraph(v, ns);
      }
      ts.forEachChild(n, visit);
    };
    visit(node);
  }

  private addNode(call: ts.CallExpression, ns: string[]): void {
    const [nameArg, action] = call.arguments;
    if (!nameArg || !ts.isStringLiteralLike(nameArg) || !action) return;
    let target: ts.VariableDeclaration | undefined;
    const look = (n: ts.Node): void => {
      if (target) return;
      if (ts.isIdentifier(n)) target = this.graphVariable(n);
      if (!target) ts.forEachChild(n, look);
    };
    look(action);
    if (!target) return;
    const path = [...ns, nameArg.text];
    this.found.push({ ns: path.join("|"), decl: target });
    this.visitGraph(target, path);
  }
}

function leftmost(e: ts.Expression): string | undefined {
  let cur: ts.Expression = e;
  for (;;) {
    if (ts.isCallExpression(cur)) cur = cur.expression;
    else if (ts.isPropertyAccessExpression(cur)) cur = cur.expression;
    else if (ts.isParenthesizedExpression(cur) || ts.isAwaitExpression(cur)) cur = cur.expression;
    else break;
  }
  return ts.isIdentifier(cur) ? cur.text : undefined;
}

const isTopLevel = (decl: ts.VariableDeclaration) =>
  ts.isVariableDeclarationList(decl.parent) &&
  ts.isVariableStatement(decl.parent.parent) &&
  ts.isSourceFile(decl.parent.parent.parent);

/** A graph to extract: its module and export. */
export interface StaticTarget {
  file: string;
  exportName: string | undefined;
}

/** The schemas of one graph, or why they could not be extracted. */
export type StaticResult = { ok: StaticGraphSchemas } | { error: string };

/** The namespaces and type expressions of an exported graph and of the subgraphs its nodes call. */
function findTargets(
  checker: ts.TypeChecker,
  sf: ts.SourceFile,
  exportName: string | undefined,
  aliases: { of: Map<ts.VariableDeclaration, string>; appended: Map<string, string[]> },
): Target[] {
  const moduleSym = checker.getSymbolAtLocation(sf);
  const name = exportName ?? "default";
  const exported = moduleSym && checker.getExportsOfModule(moduleSym).find((s) => s.getName() === name);
  if (!exported) throw new Error(`no export "${name}" in ${sf.fileName}`);
  const spec = (file: string) => JSON.stringify(file);
  const targets: Target[] = [
    { ns: "", typeExpr: `typeof import(${spec(sf.fileName)})[${JSON.stringify(name)}]` },
  ];
  const finder = new SubgraphFinder(checker);
  const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const rootDecl = target.valueDeclaration;
  if (rootDecl && ts.isVariableDeclaration(rootDecl)) finder.visitGraph(rootDecl, []);
  else if (rootDecl && ts.isExportAssignment(rootDecl)) {
    const collect = (n: ts.Node): void => {
      const v = ts.isIdentifier(n) ? finder.graphVariable(n) : undefined;
      if (v) finder.visitGraph(v, []);
      ts.forEachChild(n, collect);
    };
    collect(rootDecl.expression);
  }
  // Subgraph variables are given exported type aliases in their own (top-level, project) file.
  for (const { ns, decl } of finder.found) {
    if (!isTopLevel(decl) || !ts.isIdentifier(decl.name)) continue;
    const file = decl.getSourceFile().fileName;
    if (/[\\/]node_modules[\\/]/.test(file)) continue;
    let alias = aliases.of.get(decl);
    if (!alias) {
      alias = `__hangar_subgraph_${aliases.of.size}`;
      aliases.of.set(decl, alias);
      const line = `export type ${alias} = typeof ${decl.name.text};`;
      aliases.appended.set(file, [...(aliases.appended.get(file) ?? []), line]);
    }
    targets.push({ ns, typeExpr: `import(${spec(file)}).${alias}` });
  }
  return targets;
}

const message = (e: unknown) => (e as Error)?.message ?? String(e);

/**
 * Schemas of exported graphs (and of their subgraphs by namespace), read from their TypeScript types. One
 * compiler program serves every graph of the project, so the type check of @langchain/* is paid once.
 */
export function extractStaticSchemas(graphs: StaticTarget[]): StaticResult[] {
  if (!graphs.length) return [];
  const options = compilerOptions(graphs[0].file);
  const cache = new Map<string, ts.SourceFile>();
  const files = graphs.map((g) => g.file);
  const first = ts.createProgram(files, options, makeHost(options, new Map(), cache));
  const checker = first.getTypeChecker();
  const aliases = { of: new Map<ts.VariableDeclaration, string>(), appended: new Map<string, string[]>() };
  const found = graphs.map((g): Target[] | string => {
    const sf = first.getSourceFile(g.file);
    if (!sf) return `cannot read ${g.file}`;
    try {
      return findTargets(checker, sf, g.exportName, aliases);
    } catch (e) {
      return message(e);
    }
  });

  const overrides = new Map<string, string>();
  for (const [file, lines] of aliases.appended) {
    const text = first.getSourceFile(file)?.getFullText() ?? "";
    overrides.set(file, `${text}\n${lines.join("\n")}\n`);
  }
  // One generated file per graph, beside it, so `@langchain/langgraph` resolves as the graph's own imports do.
  const stamp = Date.now();
  const inferFiles = graphs.map((g, i) => {
    const targets = found[i];
    if (typeof targets === "string") return undefined;
    const inferFile = join(dirname(g.file), `__hangar_schema_${stamp}_${i}.ts`);
    const lines = [HELPERS];
    targets.forEach((t, j) => {
      lines.push(`type __G${j} = ${t.typeExpr};`);
      for (const k of KINDS) lines.push(`export type __G${j}_${k} = __${k}<__G${j}>;`);
    });
    overrides.set(inferFile, lines.join("\n"));
    return inferFile;
  });
  const roots = [...files, ...inferFiles.filter((f): f is string => !!f)];
  const second = ts.createProgram(roots, options, makeHost(options, overrides, cache), first);
  const checker2 = second.getTypeChecker();

  return graphs.map((_, i): StaticResult => {
    const targets = found[i];
    if (typeof targets === "string") return { error: targets };
    try {
      const decls = new Map<string, ts.TypeAliasDeclaration>();
      for (const st of second.getSourceFile(inferFiles[i]!)!.statements) {
        if (ts.isTypeAliasDeclaration(st)) decls.set(st.name.text, st);
      }
      const schemaOf = (alias: string): Record<string, unknown> | undefined => {
        const decl = decls.get(alias);
        if (!decl) return undefined;
        const type = checker2.getTypeAtLocation(decl.name);
        if (type.flags & (ts.TypeFlags.Never | ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return undefined;
        return new TypeToJsonSchema(checker2).root(type);
      };
      const result: StaticGraphSchemas = { root: {}, subgraphs: {} };
      targets.forEach((t, j) => {
        const schema: GraphSchema = {};
        for (const k of KINDS) schema[k] = schemaOf(`__G${j}_${k}`);
        if (t.ns) result.subgraphs[t.ns] = schema;
        else result.root = schema;
      });
      return { ok: result };
    } catch (e) {
      return { error: message(e) };
    }
  });
}
