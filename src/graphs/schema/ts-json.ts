// Converts TypeScript types (from the compiler API) to draft-07 JSON schemas, in the shape the official
// server gives for graph state types: named object types under `definitions`, messages as BaseMessage arrays.
import ts from "typescript";

type Json = Record<string, unknown>;

export const DRAFT_07 = "http://json-schema.org/draft-07/schema#";

/** How a LangChain message is described (the dict form clients send and receive). */
const MESSAGE_DEFINITION: Json = {
  type: "object",
  properties: {
    type: { type: "string" },
    content: { anyOf: [{ type: "string" }, { type: "array", items: { type: "object" } }] },
    id: { type: "string" },
    name: { type: "string" },
    additional_kwargs: { type: "object" },
    response_metadata: { type: "object" },
  },
};

const MAX_DEPTH = 12;

/** One conversion: shared `definitions` for every schema of the same root type. */
export class TypeToJsonSchema {
  private definitions: Record<string, Json> = {};
  private pending = new Set<string>();

  constructor(private checker: ts.TypeChecker) {}

  /** The schema of a root type: an object schema with `$schema` (and `definitions` when any). */
  root(type: ts.Type): Json {
    this.definitions = {};
    const schema = this.convert(type, 0);
    const out: Json = { ...schema };
    if (Object.keys(this.definitions).length) out.definitions = this.definitions;
    out.$schema = DRAFT_07;
    return out;
  }

  private convert(type: ts.Type, depth: number): Json {
    if (depth > MAX_DEPTH) return {};
    const f = type.flags;
    if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return {};
    if (f & ts.TypeFlags.Never) return { not: {} };
    if (f & ts.TypeFlags.StringLiteral)
      return { type: "string", const: (type as ts.StringLiteralType).value };
    if (f & ts.TypeFlags.NumberLiteral)
      return { type: "number", const: (type as ts.NumberLiteralType).value };
    if (f & ts.TypeFlags.BooleanLiteral) return { type: "boolean", const: this.intrinsic(type) === "true" };
    if (f & (ts.TypeFlags.String | ts.TypeFlags.TemplateLiteral)) return { type: "string" };
    if (f & ts.TypeFlags.Number) return { type: "number" };
    if (f & ts.TypeFlags.Boolean) return { type: "boolean" };
    if (f & ts.TypeFlags.BigInt) return { type: "integer" };
    if (f & ts.TypeFlags.Null) return { type: "null" };
    if (f & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)) return {};
    if (type.isUnion()) return this.union(type.types, depth);
    if (type.isIntersection()) return this.intersection(type, depth);
    if (f & ts.TypeFlags.Object) return this.object(type as ts.ObjectType, depth);
    return {};
  }

  private intrinsic(type: ts.Type): string {
    return (type as { intrinsicName?: string }).intrinsicName ?? "";
  }

  private union(members: ts.Type[], depth: number): Json {
    // `undefined` (optional keys) and LangGraph's `Overwrite` wrapper (`{ __overwrite__ }`) are left out.
    const kept = members.filter(
      (m) =>
        !(m.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)) &&
        !this.checker.getPropertyOfType(m, "__overwrite__"),
    );
    const msgs = this.messagesIn(kept);
    if (msgs) return msgs;
    const bools = kept.filter((m) => m.flags & ts.TypeFlags.BooleanLiteral);
    const rest = kept.filter((m) => !(m.flags & ts.TypeFlags.BooleanLiteral));
    const parts = [
      ...(bools.length === 2 ? [{ type: "boolean" }] : bools.map((b) => this.convert(b, depth))),
    ];
    parts.push(...rest.map((m) => this.convert(m, depth + 1)));
    if (parts.length === 1) return parts[0];
    if (parts.some((p) => Object.keys(p).length === 0)) return {};
    // Literals of one JSON type become an enum; plain primitives a list of types.
    const isLiteral = (p: Json) => "const" in p && Object.keys(p).length === 2;
    if (parts.every(isLiteral) && new Set(parts.map((p) => p.type)).size === 1) {
      return { type: parts[0].type, enum: parts.map((p) => p.const) };
    }
    const isPlain = (p: Json) => Object.keys(p).length === 1 && typeof p.type === "string";
    if (parts.every(isPlain)) return { type: [...new Set(parts.map((p) => p.type as string))] };
    return { anyOf: parts };
  }

  private intersection(type: ts.IntersectionType, depth: number): Json {
    // `string & {}` style brands are their primitive.
    const prim = type.types.find((t) => t.flags & (ts.TypeFlags.String | ts.TypeFlags.Number));
    if (prim) return this.convert(prim, depth);
    return this.properties(type, depth);
  }

  /** A messages channel (BaseMessage arrays, or unions holding one) as an array of message refs. */
  private messagesIn(members: ts.Type[]): Json | undefined {
    for (const m of members) {
      if (!this.checker.isArrayType(m)) continue;
      const el = this.checker.getTypeArguments(m as ts.TypeReference)[0];
      const els = el?.isUnion() ? el.types : el ? [el] : [];
      const msg = els.find((e) => this.isMessage(e));
      if (msg) return { type: "array", items: this.messageRef(msg) };
    }
    const single = members.find((m) => this.isMessage(m));
    if (single && members.every((m) => this.isMessage(m) || !(m.flags & ts.TypeFlags.Object))) {
      return this.messageRef(single);
    }
    return undefined;
  }

  private isMessage(type: ts.Type): boolean {
    const seen = new Set<ts.Type>();
    const walk = (t: ts.Type): boolean => {
      if (seen.has(t)) return false;
      seen.add(t);
      const name = t.getSymbol()?.getName();
      if (name === "BaseMessage" && this.fromLangChain(t)) return true;
      const target = (t as ts.TypeReference).target ?? t;
      return (target.isClassOrInterface() ? this.checker.getBaseTypes(target) : []).some(walk);
    };
    return walk(type);
  }

  private fromLangChain(t: ts.Type): boolean {
    const file = t.getSymbol()?.declarations?.[0]?.getSourceFile().fileName ?? "";
    return /[\\/]@langchain[\\/]core[\\/]/.test(file);
  }

  /** `$ref` to the BaseMessage definition, named as the official server names it. */
  private messageRef(msg: ts.Type): Json {
    let base = msg;
    const seen = new Set<ts.Type>();
    const find = (t: ts.Type): ts.Type | undefined => {
      if (seen.has(t)) return undefined;
      seen.add(t);
      if (t.getSymbol()?.getName() === "BaseMessage") return t;
      const target = (t as ts.TypeReference).target ?? t;
      for (const b of target.isClassOrInterface() ? this.checker.getBaseTypes(target) : []) {
        const r = find(b);
        if (r) return r;
      }
      return undefined;
    };
    base = find(msg) ?? msg;
    const name = this.typeName(base);
    this.definitions[name] ??= MESSAGE_DEFINITION;
    return { $ref: `#/definitions/${name}` };
  }

  private typeName(type: ts.Type): string {
    return this.checker
      .typeToString(
        type,
        undefined,
        ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseFullyQualifiedType,
      )
      .replace(/import\([^)]*\)\./g, "")
      .replace(/\s+/g, "");
  }

  private object(type: ts.ObjectType, depth: number): Json {
    const checker = this.checker;
    if (checker.isArrayType(type) || checker.isArrayLikeType(type)) {
      if (checker.isTupleType(type)) {
        const items = checker
          .getTypeArguments(type as ts.TypeReference)
          .map((t) => this.convert(t, depth + 1));
        return { type: "array", items, minItems: items.length, maxItems: items.length };
      }
      const msgs = this.messagesIn([type]);
      if (msgs) return msgs;
      const el = checker.getTypeArguments(type as ts.TypeReference)[0];
      return { type: "array", items: el ? this.convert(el, depth + 1) : {} };
    }
    if (this.isMessage(type)) return this.messageRef(type);
    const name = type.getSymbol()?.getName();
    if (name === "Date") return { type: "string", format: "date-time" };
    if (type.getCallSignatures().length && !checker.getPropertiesOfType(type).length) return {};
    // Named interfaces and classes go to `definitions`; anonymous object types stay inline.
    const named =
      name &&
      !name.startsWith("__") &&
      (type.objectFlags & (ts.ObjectFlags.Class | ts.ObjectFlags.Interface | ts.ObjectFlags.Reference)) !== 0;
    if (!named) return this.properties(type, depth);
    const key = this.typeName(type);
    if (!this.definitions[key] && !this.pending.has(key)) {
      this.pending.add(key);
      const def = this.properties(type, depth);
      this.pending.delete(key);
      this.definitions[key] = def;
    }
    return { $ref: `#/definitions/${key}` };
  }

  private properties(type: ts.Type, depth: number): Json {
    const out: Json = { type: "object" };
    const props: Record<string, Json> = {};
    for (const prop of this.checker.getPropertiesOfType(type)) {
      const decl = prop.valueDeclaration ?? prop.declarations?.[0];
      if (prop.getName().startsWith("__@")) continue;
      if (
        decl &&
        ts.getCombinedModifierFlags(decl as ts.Declaration) & ts.ModifierFlags.NonPublicAccessibilityModifier
      )
        continue;
      const propType = this.checker.getTypeOfSymbol(prop);
      if (prop.flags & ts.SymbolFlags.Method) continue;
      if (propType.getCallSignatures().length && !this.checker.getPropertiesOfType(propType).length) continue;
      const schema = { ...this.convert(propType, depth + 1) };
      const doc = ts.displayPartsToString(prop.getDocumentationComment(this.checker)).trim();
      props[prop.getName()] = doc ? { description: doc, ...schema } : schema;
    }
    if (Object.keys(props).length) out.properties = props;
    const index = this.checker.getIndexInfoOfType(type, ts.IndexKind.String);
    // An index signature of any/unknown (LangGraph's open config) stays implicit, as in the official schemas.
    const open =
      index && (index.type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown) || index.type.isUnion());
    if (index && !open) out.additionalProperties = this.convert(index.type, depth + 1);
    return out;
  }
}
