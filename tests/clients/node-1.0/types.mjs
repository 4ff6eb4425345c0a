// The TypeScript types @polar-sh/sdk 1.0.1 declares for one API version, read at run time, and
// a check of a JSON value against one of them. Shared by journey.mjs and feature_flags.mjs.
//
// The package's answers are not checked at runtime (any 2xx is returned as parsed JSON) and
// `validateEvent` only verifies the signature and the event type, so these scripts check the
// values themselves: a required field that is missing, a null in a field that is not nullable,
// a wrong type or a value outside a literal union is a mismatch.

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export function clip(text, n = 600) {
  return text.length > n ? `${text.slice(0, n)}…(${text.length} chars)` : text;
}

// --- The package's TypeScript types for this version ----------------------------------------
//
// The models file declares every interface one field per line (`  name?: Type;`) and every
// alias on one line (`type X = A | B;`); types use only names, string/number literals,
// unions, parentheses, `[]` and `Record<K, V>`.

/**
 * The declaration files of `module` (e.g. `@polar-sh/sdk/2026-04`): its models file, then the
 * files of its client and webhooks (where the webhook payloads are declared).
 */
function declarations(module) {
  const entry = fileURLToPath(import.meta.resolve(module));
  const dts = readFileSync(join(dirname(entry), "index.d.mts"), "utf8");
  const name = dts.match(/from "\.\.\/(models-[^"]+)\.mjs"/)?.[1];
  if (!name) throw new Error(`no models import in ${entry}`);
  const others = [...dts.matchAll(/from "\.\.\/(index-[^"]+)\.mjs"/g)].map((m) => m[1]);
  return [name, ...others].map((n) => readFileSync(join(dirname(entry), "..", `${n}.d.mts`), "utf8"));
}

function parseType(text) {
  const tokens = text.match(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|[A-Za-z_$][\w$]*|\[\]|[|()<>,]/g);
  let i = 0;
  const peek = () => tokens[i];
  const take = (t) => {
    if (t !== undefined && tokens[i] !== t) throw new Error(`expected ${t} in ${text}`);
    return tokens[i++];
  };
  function union() {
    const of = [postfix()];
    while (peek() === "|") {
      take("|");
      of.push(postfix());
    }
    return of.length === 1 ? of[0] : { k: "union", of };
  }
  function postfix() {
    let node = primary();
    while (peek() === "[]") {
      take("[]");
      node = { k: "array", of: node };
    }
    return node;
  }
  function primary() {
    const t = take();
    if (t === "(") {
      const node = union();
      take(")");
      return node;
    }
    if (t.startsWith('"')) return { k: "lit", v: JSON.parse(t) };
    if (/^-?\d/.test(t)) return { k: "lit", v: Number(t) };
    if (t === "true" || t === "false") return { k: "lit", v: t === "true" };
    if (t === "null") return { k: "lit", v: null };
    const args = [];
    if (peek() === "<") {
      take("<");
      args.push(union());
      while (peek() === ",") {
        take(",");
        args.push(union());
      }
      take(">");
    }
    return { k: "ref", name: t, args };
  }
  const node = union();
  if (i !== tokens.length) throw new Error(`trailing tokens in ${text}`);
  return node;
}

function parseModels(source) {
  const text = source.replace(/\/\*\*[\s\S]*?\*\//g, "");
  const interfaces = {};
  const aliases = {};
  let current = null;
  for (const line of text.split("\n")) {
    let m;
    if ((m = line.match(/^interface (\w+)(?: extends (.+?))? \{(\})?$/))) {
      current = { name: m[1], fields: {}, open: m[2] === "Record<string, never>" };
      interfaces[m[1]] = current;
      if (m[3]) current = null;
    } else if (current && line === "}") {
      current = null;
    } else if (current && (m = line.match(/^ {2}("[^"]+"|[\w$]+)(\?)?: (.+);$/))) {
      const key = m[1].startsWith('"') ? JSON.parse(m[1]) : m[1];
      current.fields[key] = { optional: Boolean(m[2]), type: m[3] };
    } else if ((m = line.match(/^type (\w+) = (.+);$/))) {
      aliases[m[1]] = m[2];
    }
  }
  return { interfaces, aliases };
}

/** The declarations of the loaded module: {interfaces, aliases}. */
let MODELS = { interfaces: {}, aliases: {} };

/**
 * Reads the declarations of `module` (one per process); returns them as {interfaces, aliases}.
 * A name the models file declares wins over one of the same name elsewhere.
 */
export function loadTypes(module) {
  MODELS = { interfaces: {}, aliases: {} };
  for (const source of declarations(module)) {
    const found = parseModels(source);
    MODELS.interfaces = { ...found.interfaces, ...MODELS.interfaces };
    MODELS.aliases = { ...found.aliases, ...MODELS.aliases };
  }
  return MODELS;
}
const PARSED = new Map();
const parsed = (text) => {
  if (!PARSED.has(text)) PARSED.set(text, parseType(text));
  return PARSED.get(text);
};

const PRIMITIVES = {
  string: (v) => typeof v === "string",
  number: (v) => typeof v === "number",
  boolean: (v) => typeof v === "boolean",
  unknown: () => true,
  any: () => true,
  undefined: (v) => v === undefined,
};

function describe(v) {
  if (v === undefined) return "missing";
  if (v === null) return "null";
  return clip(JSON.stringify(v), 80);
}

/** Whether `value` is of the kind (null, string, number, boolean, array, object) of `node`. */
function kindOf(node, value) {
  if (node.k === "lit") return node.v === null ? value === null : typeof value === typeof node.v;
  if (node.k === "array") return Array.isArray(value);
  if (node.k === "union") return node.of.some((b) => kindOf(b, value));
  if (node.name in PRIMITIVES) return node.name === "unknown" || node.name === "any" || PRIMITIVES[node.name](value);
  if (node.name in MODELS.aliases) return kindOf(parsed(MODELS.aliases[node.name]), value);
  return Boolean(value) && typeof value === "object" && !Array.isArray(value);
}

/**
 * The mismatches of `value` against the type `node`, as {path, text, weight}; a wrong literal
 * where the answer has a value weighs 100 (a union branch it was not meant to be), others 1.
 */
export function mismatches(value, node, path) {
  const here = path.join(".");
  if (node.k === "lit") {
    if (value === node.v) return [];
    if (value === undefined) return [{ path: here, text: "required, missing", weight: 1 }];
    if (node.v === null) return [{ path: here, text: `expected null, got ${describe(value)}`, weight: 1 }];
    return [{ path: here, text: `expected ${JSON.stringify(node.v)}, got ${describe(value)}`, weight: 100 }];
  }
  if (node.k === "array") {
    if (!Array.isArray(value)) return [{ path: here, text: `expected an array, got ${describe(value)}`, weight: 1 }];
    return value.slice(0, 20).flatMap((x, i) => mismatches(x, node.of, [...path, i]));
  }
  if (node.k === "union") {
    const branches = node.of.map((b) => mismatches(value, b, path));
    if (branches.some((b) => b.length === 0)) return [];
    const literals = node.of.filter((b) => b.k === "lit");
    const named = node.of.filter((b) => b.k !== "lit" || b.v !== null);
    if (literals.length === node.of.length || named.every((b) => b.k === "lit")) {
      // An enum: say which values were allowed.
      const allowed = literals.map((b) => JSON.stringify(b.v)).join("|");
      if (value === undefined) return [{ path: here, text: "required, missing", weight: 1 }];
      return [{ path: here, text: `expected one of ${allowed}, got ${describe(value)}`, weight: value === null ? 1 : 100 }];
    }
    if (value === null && !node.of.some((b) => b.k === "lit" && b.v === null)) {
      return [{ path: here, text: "not nullable, got null", weight: 1 }];
    }
    // Among the branches of the value's own kind (an object is not meant to be a null), the
    // one with the fewest mismatches is the one the answer was meant to be.
    const weight = (b) => b.reduce((n, x) => n + x.weight, 0);
    const sameKind = branches.filter((_, i) => kindOf(node.of[i], value));
    return (sameKind.length ? sameKind : branches).sort((a, b) => weight(a) - weight(b))[0];
  }
  // A name.
  const { name, args } = node;
  if (name in PRIMITIVES) {
    if (PRIMITIVES[name](value)) return [];
    if (value === undefined) return [{ path: here, text: "required, missing", weight: 1 }];
    if (value === null) return [{ path: here, text: "not nullable, got null", weight: 1 }];
    return [{ path: here, text: `expected ${name}, got ${describe(value)}`, weight: 1 }];
  }
  if (name === "Record") {
    if (value === undefined) return [{ path: here, text: "required, missing", weight: 1 }];
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      return [{ path: here, text: `expected an object, got ${describe(value)}`, weight: 1 }];
    }
    if (args[1]?.k === "ref" && args[1].name === "never") return [];
    return Object.entries(value).flatMap(([k, x]) => mismatches(x, args[1], [...path, k]));
  }
  if (name in MODELS.aliases) return mismatches(value, parsed(MODELS.aliases[name]), path);
  const model = MODELS.interfaces[name];
  if (!model) return [{ path: here, text: `unknown type ${name} in the package`, weight: 1 }];
  if (value === undefined) return [{ path: here, text: `required (${name}), missing`, weight: 1 }];
  if (value === null) return [{ path: here, text: `not nullable (${name}), got null`, weight: 1 }];
  if (typeof value !== "object" || Array.isArray(value)) {
    return [{ path: here, text: `expected ${name}, got ${describe(value)}`, weight: 1 }];
  }
  if (model.open) return [];
  const out = [];
  for (const [key, field] of Object.entries(model.fields)) {
    if (!(key in value)) {
      if (!field.optional) out.push({ path: [...path, key].join("."), text: "required, missing", weight: 1 });
      continue;
    }
    out.push(...mismatches(value[key], parsed(field.type), [...path, key]));
  }
  return out;
}

