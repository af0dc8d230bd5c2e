/**
 * Reads a scenario file: YAML with line positions, validated against the schema, every complaint
 * turned into a `ScenarioError` naming file, line and field (`quickstart.yaml:12: workload.lod:
 * unknown field (did you mean 'load'?)`).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { type Document, isNode, LineCounter, parseDocument, visit } from 'yaml';
import { parseBytes, parseDurationNs, parseRateBps } from '../../core/time.js';
import { ScenarioError } from '../engine/errors.js';
import {
  loadSchemeModule,
  moduleSchemeSchema,
  registeredKinds,
  type SchemeDefinition,
} from '../registry/index.js';
import { AJV_OPTIONS, scenarioSchema, signedDuration } from './schema.js';
import type { RawScenario, ScenarioSource } from './source.js';
import { bytes, duration, rate } from './units.js';

export type { RawScenario, ScenarioSource } from './source.js';

let ajv: Ajv | null = null;
/** the validator of the schemes registered when it was made (their kinds, joined) */
let validate: { kinds: string; fn: ValidateFunction } | null = null;
/** per scheme loaded from a module: the scenario schema with that scheme's `scheme:` section */
const moduleValidators = new Map<SchemeDefinition, ValidateFunction>();

/**
 * A schema compiled here: only a scheme from a module (or the sources without a build) needs Ajv
 * itself, so it loads then (~60 modules every other command skips).
 */
function compile(schema: object): ValidateFunction {
  if (ajv === null) {
    const { Ajv: AjvClass } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
    ajv = new AjvClass(AJV_OPTIONS);
  }
  return ajv.compile(schema);
}

/**
 * The built-in schema's validator: the one the build generated (scripts/postbuild.mjs: compiling
 * the schema costs ~100 ms of every command's start), else (from the TypeScript sources) compiled here.
 */
function builtinValidator(): ValidateFunction {
  const kinds = registeredKinds().join();
  if (validate?.kinds !== kinds) {
    let fn: ValidateFunction | undefined;
    try {
      const built = createRequire(import.meta.url)('./scenario-validator.cjs') as ValidateFunction & {
        kinds?: string[];
      };
      // the build's validator knows dcemu's own schemes: a program that registered others compiles its own
      if (built.kinds?.join() === kinds) fn = built;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    }
    validate = { kinds, fn: fn ?? compile(scenarioSchema()) };
  }
  return validate.fn;
}

function validatorFor(scheme: SchemeDefinition | null): ValidateFunction {
  if (scheme === null) return builtinValidator();
  let v = moduleValidators.get(scheme);
  if (!v) {
    const all = scenarioSchema();
    const schema = { ...all, properties: { ...all.properties, scheme: moduleSchemeSchema(scheme) } };
    v = compile(schema);
    moduleValidators.set(scheme, v);
  }
  return v;
}

/** `key.path=value` overrides from the command line, applied before validation (values parse as YAML). */
export type Overrides = string[];

export function loadScenarioFile(file: string, overrides: Overrides = []): ScenarioSource {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such scenario file'
        : code === 'EISDIR'
          ? 'a folder, not a scenario file'
          : code === 'EACCES'
            ? 'cannot read the scenario file (permission denied)'
            : `cannot read the scenario file (${code ?? err})`;
    throw new ScenarioError(file, -1, '', why);
  }
  return parseScenario(text, file, overrides);
}

export function parseScenario(text: string, file: string, overrides: Overrides = []): ScenarioSource {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const line = e.linePos?.[0]?.line ?? lc.linePos(e.pos[0]).line;
    // a repeated key: name it (yaml says only "Map keys must be unique")
    if (e.code === 'DUPLICATE_KEY') {
      const key = /^["']?([^\s:#"']+)/.exec(text.slice(e.pos[0]))?.[1] ?? '';
      throw new ScenarioError(file, line, key, 'this key appears twice in the same mapping; keep one');
    }
    throw new ScenarioError(file, line, '', `YAML syntax: ${e.message.split('\n')[0]}`);
  }
  applyOverrides(doc, overrides, file);
  const data = plainData(doc, lc, file) as RawScenario;
  const lineOf = (path: Array<string | number>) => lineOfPath(doc, lc, path);
  const error = (path: Array<string | number>, problem: string) =>
    new ScenarioError(file, lineOf(path), path.join('.'), problem);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new ScenarioError(file, 1, '', 'a scenario is a YAML mapping (topology:, workload:, ...)');
  }
  const problem = schemaProblem(data, file);
  if (problem) throw error(problem.path, problem.problem);
  return { file, data, lineOf, error };
}

/**
 * The most useful complaint of the scenario schema about `data` (read from `file`), or null when it
 * is valid. A scheme of the user's own (`scheme.module`) is loaded first, and its settings are
 * checked against its own schema fragment like every other field.
 */
export function schemaProblem(
  data: unknown,
  file: string,
): { path: Array<string | number>; problem: string } | null {
  const module = (data as { scheme?: { module?: unknown } } | null)?.scheme?.module;
  let scheme: SchemeDefinition | null = null;
  if (typeof module === 'string') {
    try {
      scheme = loadSchemeModule(module, file);
    } catch (err) {
      return { path: ['scheme', 'module'], problem: (err as Error).message };
    }
  }
  const odd = oddNumber(data, []);
  if (odd) return odd;
  const v = validatorFor(scheme);
  if (v(data)) return null;
  const err = pickError(v.errors ?? []);
  return { path: pathOf(err), problem: describe(err) };
}

/** the resolvers' parsers of values with units (a signed duration's sign aside): they throw on any other string */
const UNIT_PARSERS: Array<(v: string) => number> = [
  (v) => parseDurationNs(v.trim().replace(/^-/, '')),
  parseRateBps,
  parseBytes,
];

/**
 * The first number no field takes, with its path: YAML's `.inf`, `-.inf` and `.nan` are numbers to the
 * schema (a `.nan` even fails its checks as "got null"), and so is a value with a unit too large for a
 * number (`1e400us`, `1e300s`: the pattern takes it, the parser makes it infinite; a string of any field
 * that a unit parser reads as infinite is refused, a name such as `1e400s` too); an infinite delay
 * or rate would surface later as a broken topology, an infinite duration as a run that never ends.
 */
function oddNumber(
  v: unknown,
  path: Array<string | number>,
): { path: Array<string | number>; problem: string } | null {
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return { path, problem: 'must be a number, got .nan' };
    if (!Number.isFinite(v))
      return { path, problem: `must be a finite number, got ${v > 0 ? '.inf' : '-.inf'}` };
    return null;
  }
  if (typeof v === 'string') {
    for (const parse of UNIT_PARSERS) {
      let n = 0;
      try {
        n = parse(v);
      } catch {
        continue;
      }
      if (!Number.isFinite(n)) return { path, problem: `'${v}' is too large: it comes to infinity` };
    }
    return null;
  }
  if (v === null || typeof v !== 'object') return null;
  for (const [k, x] of Array.isArray(v) ? v.entries() : Object.entries(v)) {
    const odd = oddNumber(x, [...path, k]);
    if (odd) return odd;
  }
  return null;
}

/** `key.path=value` overrides, set into the document (values parse as YAML). */
export function applyOverrides(doc: Document, overrides: Overrides, file: string): void {
  for (const o of overrides) {
    const eq = o.indexOf('=');
    if (eq <= 0) throw new ScenarioError(file, -1, '', `--set '${o}': expected key.path=value`);
    const path = o
      .slice(0, eq)
      .split('.')
      .map((k) => (/^\d+$/.test(k) ? Number(k) : k));
    const value = parseDocument(o.slice(eq + 1)).toJS();
    try {
      doc.setIn(path, doc.createNode(value));
    } catch (err) {
      throw new ScenarioError(file, -1, o.slice(0, eq), `--set: ${(err as Error).message}`);
    }
  }
}

/**
 * A scenario has no use for deep YAML aliases: past this many expanded nodes (yaml's own count of
 * alias uses, each weighted by what it expands to) a file is an alias bomb, refused at its first alias.
 */
const MAX_ALIAS_COUNT = 1000;

/** The document as plain data, alias expansion bounded; a bomb is a file:line error, not a crash. */
export function plainData(doc: Document, lc: LineCounter, file: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    let line = 1;
    visit(doc, {
      Alias(_key, node) {
        if (node.range) line = lc.linePos(node.range[0]).line;
        return visit.BREAK;
      },
    });
    throw new ScenarioError(
      file,
      line,
      '',
      `YAML aliases expand too far (${(err as Error).message.split('\n')[0]})`,
    );
  }
}

export function lineOfPath(doc: Document, lc: LineCounter, path: Array<string | number>): number {
  for (let n = path.length; n >= 0; n--) {
    // a field of a mapping: the line of its key, where the user wrote the name (a block value starts
    // on the next line)
    if (n > 0) {
      const parent = n === 1 ? doc.contents : doc.getIn(path.slice(0, n - 1), true);
      const key = (
        parent as { items?: Array<{ key?: { value?: unknown; range?: number[] } }> } | null
      )?.items?.find((it) => it.key?.value === path[n - 1])?.key;
      if (key?.range) return lc.linePos(key.range[0]).line;
    }
    const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    if (isNode(node) && node.range) return lc.linePos(node.range[0]).line;
  }
  return 1;
}

function pathOf(err: ErrorObject): Array<string | number> {
  const parts = err.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  if (err.keyword === 'additionalProperties')
    parts.push((err.params as { additionalProperty: string }).additionalProperty);
  if (err.keyword === 'required') parts.push((err.params as { missingProperty: string }).missingProperty);
  return parts;
}

/** The most useful of several schema complaints: unknown fields and enums first, then the deepest. */
function pickError(errors: ErrorObject[]): ErrorObject {
  const rank = (e: ErrorObject) =>
    (e.keyword === 'additionalProperties' ? 3 : e.keyword === 'enum' ? 2 : e.keyword === 'required' ? 1 : 0) *
      100 +
    e.instancePath.split('/').length;
  return errors.slice().sort((a, b) => rank(b) - rank(a))[0];
}

function describe(err: ErrorObject): string {
  const p = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'additionalProperties': {
      const allowed = Object.keys((err.parentSchema as { properties?: object })?.properties ?? {});
      const near = closest(String(p.additionalProperty), allowed);
      return `unknown field${near ? ` (did you mean '${near}'?)` : ''}; expected one of ${allowed.join(', ')}`;
    }
    case 'required':
      return 'required field is missing';
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'pattern': {
      const pattern = (err.parentSchema as { pattern?: string } | undefined)?.pattern;
      const kind = UNIT_KINDS.find((k) => k.patterns.includes(pattern ?? ''));
      if (kind?.signed !== true && /^\s*-/.test(String(err.data)))
        return `must not be negative, got '${String(err.data)}'`;
      return kind
        ? unitMistake(kind, String(err.data))
        : `'${String(err.data)}' is not a valid value (expected a number with a unit, e.g. 10us, 10Gbps, 150KB)`;
    }
    case 'minimum':
      return `must be >= ${String(p.limit)}, got ${JSON.stringify(err.data)}`;
    case 'type':
      return `must be ${String(p.type).replace(',', ' or ')}, got ${JSON.stringify(err.data)}`;
    default:
      return `${err.message ?? 'invalid'}${err.data !== undefined ? `, got ${JSON.stringify(err.data)}` : ''}`;
  }
}

interface UnitKind {
  what: string;
  patterns: string[];
  signed?: boolean;
  units: string[];
  examples: string;
}

/** The values with units a scenario takes, by the schema pattern that checks them. */
const UNIT_KINDS: UnitKind[] = [
  {
    what: 'a duration',
    patterns: [duration.pattern],
    units: ['ns', 'us', 'µs', 'ms', 's'],
    examples: '100ns, 10us, 2.5ms, or a number of ns',
  },
  {
    what: 'a duration',
    patterns: [signedDuration.pattern],
    signed: true,
    units: ['ns', 'us', 'µs', 'ms', 's'],
    examples: '-2us, 500ns, or a number of ns',
  },
  {
    what: 'a rate',
    patterns: [rate.pattern],
    units: ['Gbps', 'Mbps', 'Kbps', 'Tbps', 'bps', 'bit/s', 'Gbit/s', 'Mbit/s'],
    examples: '10Gbps, 100Mbps, or a number of bit/s',
  },
  {
    what: 'a size',
    patterns: [bytes.pattern],
    units: ['B', 'KB', 'MB', 'GB', 'KiB', 'MiB', 'GiB'],
    examples: '1500, 150KB, 4MB, or a number of bytes',
  },
];

/**
 * What is wrong with a value that is not the number with a unit its field takes: a unit one typo
 * away from a right one (`10Gbs`: did you mean `10Gbps`?), a unit of another kind (`10us` where a
 * size belongs), or the form expected.
 */
function unitMistake(kind: UnitKind, value: string): string {
  const expected = `${kind.what} (e.g. ${kind.examples})`;
  const m = /^\s*(-?[0-9]*\.?[0-9]+(?:e[-+]?\d+)?)\s*(\S.*?)\s*$/i.exec(value);
  if (m) {
    const [, num, unit] = m;
    const exactly = (units: string[]) => units.some((u) => u.toLowerCase() === unit.toLowerCase());
    const nearest = (units: string[]) =>
      units.find((u) => editDistance(unit.toLowerCase(), u.toLowerCase()) <= 1) ?? null;
    const others = UNIT_KINDS.filter((k) => k.what !== kind.what);
    const other = others.find((k) => exactly(k.units));
    if (other) return `'${value}' is ${other.what}; this field takes ${expected}`;
    // the unit is right: the number is not (an exponent where this kind takes none)
    if (/e/i.test(num) && exactly(kind.units))
      return `'${value}' is not ${kind.what}: write its number without an exponent (e.g. ${kind.examples})`;
    const near = nearest(kind.units);
    if (near) return `'${value}' is not ${kind.what}: did you mean '${num}${near}'?`;
    const like = others.find((k) => nearest(k.units));
    if (like) return `'${value}' looks like ${like.what}; this field takes ${expected}`;
  }
  return `'${value}' is not ${expected}`;
}

/** Closest candidate by edit distance, when close enough to be a typo. */
function closest(word: string, candidates: string[]): string | null {
  let best: string | null = null;
  let bestD = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : null;
}

function editDistance(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0];
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j];
      dp[j] = Math.min(dp[j] + 1, dp[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length];
}
