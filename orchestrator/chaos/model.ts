/**
 * The failure model of a chaos run (the scenario's `chaos:` section): which components fail, how
 * often and for how long. As in Gill et al. (SIGCOMM'11), which the F10 paper's evaluation draws on,
 * each component fails and is repaired in turn: the time between failures and the time to repair are
 * log-normal (any distribution the scenario can write is accepted). A run's draw is a plain list of
 * timeline entries, so a run is reproduced by the scenario with that timeline and no `chaos:`.
 */
import { draw, Rng } from '../../core/random.js';
import { parseDurationNs } from '../../core/time.js';
import type { Topology, TopoNode } from '../../topology/types.js';
import type { FailureKind } from '../scenario/chaos-schema.js';
import { delayOf, impairmentOf } from '../scenario/impairments.js';
import { parseDist } from '../scenario/resolve.js';
import type { ScenarioSource } from '../scenario/source.js';
import { cutLinks, partitionOf } from './partition.js';

export { chaosSchema, FAILURE_KINDS, type FailureKind } from '../scenario/chaos-schema.js';

/** kinds whose targets are nodes (a partition's: the nodes it may cut off) */
const NODE_KINDS: ReadonlySet<string> = new Set(['kill', 'pause', 'clock-step', 'clock-freq', 'partition']);
/**
 * kinds that end by themselves after `repair`, with the action that ends them (the others are
 * one-shot: a kill stays, a clock fault is the servo's to repair); a link-flap's `repair` is how long
 * it flaps, its own entry's `until`
 */
const REPAIRED: Record<string, string | null> = {
  pause: 'resume',
  'link-down': 'link-up',
  'link-lossy': 'link-up',
  'link-impair': 'link-up',
  'link-flap': null,
  partition: 'heal',
};
/** the actions that end a drawn fault: not counted as faults */
export const REPAIR_ACTIONS: ReadonlySet<string> = new Set(['resume', 'link-up', 'heal']);
/** link-impair's fields, copied into the timeline entries it draws (and so into reproducers) */
const IMPAIR_FIELDS = ['delay', 'loss', 'duplicate', 'reorder', 'corrupt', 'rate', 'types', 'flows'] as const;
/** the failure settings that belong to some kinds only */
const FAILURE_SETTINGS = [
  ['loss', ['link-lossy', 'link-impair']],
  ['corrupt', ['link-lossy', 'link-impair']],
  ['delay', ['link-impair']],
  ['duplicate', ['link-impair']],
  ['reorder', ['link-impair']],
  ['rate', ['link-impair']],
  ['types', ['link-impair']],
  ['flows', ['link-impair']],
  ['down', ['link-flap']],
  ['up', ['link-flap']],
  ['size', ['partition']],
  ['groups', ['partition']],
  ['step', ['clock-step']],
  ['freq', ['clock-freq']],
] as const;

/**
 * What a failure strikes: a node, a link, or (partition) the nodes it may cut off, `size` at a time
 * from their neighbours, or two fixed groups.
 */
type Target =
  | { node: string }
  | { link: [string, string] }
  | { cut: string[]; size: number }
  | { groups: [string[], string[]] };

export interface FailureSpec {
  kind: FailureKind;
  /** the components it strikes, in topology order */
  targets: Target[];
  between: ReturnType<typeof parseDist>;
  repair: ReturnType<typeof parseDist> | null;
  loss: number;
  corrupt: number;
  /** link-impair: its fields as the scenario gave them, for the timeline entries it draws */
  impair?: Partial<Record<(typeof IMPAIR_FIELDS)[number], unknown>>;
  /** link-flap: its down and up periods as the scenario gave them */
  flap?: { down: unknown; up: unknown };
  step: ReturnType<typeof parseDist> | null;
  freq: ReturnType<typeof parseDist> | null;
  /** line of the entry, for the timeline entries it draws */
  line: number;
}

export interface ChaosModel {
  /** what the targets name: a partition's cut is drawn against it */
  topology: Topology;
  fromNs: number;
  toNs: number;
  maxFaults: number;
  /** faults out at once at most (Infinity: no limit) */
  concurrent: number;
  failures: FailureSpec[];
  lossless: boolean;
  asserts: Assertion[];
}

export interface Assertion {
  text: string;
  path: string[];
  op: '<' | '<=' | '==' | '!=' | '>=' | '>';
  value: number;
}

/** A drawn timeline entry, in the scenario's own form (durations in ns), and the failure it belongs to. */
export interface DrawnEntry {
  at: number;
  action: string;
  node?: string;
  link?: [string, string];
  loss?: unknown;
  corrupt?: unknown;
  step?: string;
  freq?: number;
  /** link-impair: its impairments, as the scenario wrote them */
  delay?: unknown;
  duplicate?: unknown;
  reorder?: unknown;
  rate?: unknown;
  types?: unknown;
  flows?: unknown;
  /** partition and its heal: the nodes cut off, and their neighbours (or the two groups) */
  groups?: [string[], string[]];
  /** link-flap: its periods, its end (`<ns>ns`) and the seed of its draws */
  down?: unknown;
  up?: unknown;
  until?: string;
  seed?: number;
  /** index of the fault (its repair shares it): faults are dropped in pairs when a reproducer is minimized */
  fault: number;
  /** index of the failure in the model that drew it (a reproducer is reduced by its kind) */
  failure: number;
}

const glob = (pattern: string) =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);

const ROLES: Record<string, (n: TopoNode) => boolean> = {
  switches: (n) => n.role === 'switch',
  hosts: (n) => n.role === 'host',
  arbiters: (n) => n.role === 'arbiter',
  nodes: () => true,
};
const LINK_CLASSES: Record<string, (a: TopoNode, b: TopoNode) => boolean> = {
  fabric: (a, b) => a.role === 'switch' && b.role === 'switch',
  host: (a, b) => a.role === 'host' || b.role === 'host',
  links: () => true,
};

function resolveTargets(
  src: ScenarioSource,
  path: Array<string | number>,
  raw: unknown,
  kind: FailureKind,
  topo: Topology,
): Array<{ node: string } | { link: [string, string] }> {
  const byName = new Map(topo.nodes.map((n) => [n.name, n]));
  const matchNodes = (p: string): TopoNode[] => {
    const re = glob(p);
    return topo.nodes.filter((n) => re.test(n.name));
  };
  const items = Array.isArray(raw) ? raw : [raw];
  const out: Array<{ node: string } | { link: [string, string] }> = [];
  const seen = new Set<string>();
  const add = (t: { node: string } | { link: [string, string] }) => {
    const key = 'node' in t ? t.node : [...t.link].sort().join('\n');
    if (!seen.has(key)) {
      seen.add(key);
      out.push(t);
    }
  };
  items.forEach((item, i) => {
    const at = Array.isArray(raw) ? [...path, i] : path;
    if (NODE_KINDS.has(kind)) {
      if (typeof item !== 'string')
        throw src.error(
          at,
          kind === 'partition'
            ? 'partition cuts nodes off: give node names or switches, hosts, arbiters, nodes (two groups go in groups)'
            : `${kind} strikes nodes: give node names or switches, hosts, arbiters, nodes`,
        );
      const ns = ROLES[item] ? topo.nodes.filter(ROLES[item]) : matchNodes(item);
      if (ns.length === 0) throw src.error(at, `'${item}' names no node of the topology`);
      for (const n of ns) add({ node: n.name });
      return;
    }
    if (typeof item === 'string') {
      const cls = LINK_CLASSES[item];
      if (!cls) throw src.error(at, `${kind} strikes links: give fabric, host, links or [a, b] pairs`);
      for (const l of topo.links) {
        const a = byName.get(l.a.node)!;
        const b = byName.get(l.b.node)!;
        if (a.role !== 'arbiter' && b.role !== 'arbiter' && cls(a, b)) add({ link: [a.name, b.name] });
      }
      return;
    }
    const [pa, pb] = (item as string[]).map(glob);
    let any = false;
    for (const l of topo.links) {
      const [a, b] = [l.a.node, l.b.node];
      if ((pa.test(a) && pb.test(b)) || (pa.test(b) && pb.test(a))) {
        any = true;
        add({ link: pa.test(a) && pb.test(b) ? [a, b] : [b, a] });
      }
    }
    if (!any) throw src.error(at, `[${(item as string[]).join(', ')}] names no link of the topology`);
  });
  return out;
}

const ASSERTION = /^\s*([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)\s*(<=|>=|==|!=|<|>)\s*(-?[0-9.eE+-]+)\s*$/;

/** What must hold after a run besides what always must: congestion drops count (`lossless`), and the asserts. */
export interface Invariants {
  lossless: boolean;
  asserts: Assertion[];
}

/**
 * An `invariants:` section (a chaos section's, or a scenario's own at `path`), its asserts parsed;
 * a malformed one names its file and line.
 */
export function resolveInvariants(
  src: ScenarioSource,
  raw: { lossless?: boolean; assert?: string[] } | undefined,
  path: string[],
): Invariants {
  const asserts = (raw?.assert ?? []).map((text, i): Assertion => {
    const m = ASSERTION.exec(text);
    if (!m || !Number.isFinite(Number(m[3])))
      throw src.error(
        [...path, 'assert', i],
        `'${text}': expected <summary field> <op> <number>, e.g. 'flows.slowdownP99 <= 50' (ops < <= == != >= >)`,
      );
    return { text: text.trim(), path: m[1].split('.'), op: m[2] as Assertion['op'], value: Number(m[3]) };
  });
  return { lossless: raw?.lossless === true, asserts };
}

/** Resolves the `chaos:` section against the topology; errors name the file, line and field. */
export function resolveChaos(src: ScenarioSource, topo: Topology, durationNs: number): ChaosModel {
  const raw = src.data.chaos;
  if (!raw) throw src.error([], 'no chaos: section (the failure model of a chaos run; see docs/chaos.md)');
  const d = (path: Array<string | number>, v: unknown, unit: (s: string) => number) =>
    distAt(src, path, v, unit);
  const ns = (path: Array<string | number>, v: unknown) => {
    try {
      return parseDurationNs(v as string);
    } catch (err) {
      throw src.error(path, (err as Error).message);
    }
  };
  const fromNs = raw.window?.from !== undefined ? ns(['chaos', 'window', 'from'], raw.window.from) : 0;
  const toNs = raw.window?.to !== undefined ? ns(['chaos', 'window', 'to'], raw.window.to) : durationNs;
  if (!(toNs > fromNs)) throw src.error(['chaos', 'window'], 'the window ends before it starts');
  const failures = (raw.failures as Array<Record<string, unknown>>).map((f, i): FailureSpec => {
    const path = ['chaos', 'failures', i];
    const kind = f.kind as FailureKind;
    const positive = (key: string) => {
      const v = d([...path, key], f[key], parseDurationNs);
      if ((v.kind === 'fixed' && !(v.v > 0)) || (v.kind === 'uniform' && !(v.lo > 0)))
        throw src.error([...path, key], 'must be above zero');
      if (v.kind === 'normal')
        throw src.error(
          [...path, key],
          'a time between failures or to repair cannot be normal (it may be negative); use lognormal',
        );
      return v;
    };
    const repaired = kind in REPAIRED;
    if (repaired && f.repair === undefined)
      throw src.error(
        [...path, 'repair'],
        kind === 'link-flap'
          ? 'link-flap needs repair: how long the link flaps (e.g. lognormal(300us, 1))'
          : `${kind} needs repair: the time to ${kind === 'partition' ? 'heal' : 'repair'} (e.g. lognormal(200us, 1))`,
      );
    if (!repaired && f.repair !== undefined)
      throw src.error(
        [...path, 'repair'],
        `${kind} is not repaired (${kind === 'kill' ? 'a killed node stays dead' : 'the clock servo repairs it'})`,
      );
    checkFailureFields(src, path, f, kind);
    const impair = kind === 'link-impair' ? impairFields(src, path, f, topo) : undefined;
    const signed = (v: string) => (v.startsWith('-') ? -parseDurationNs(v.slice(1)) : parseDurationNs(v));
    return {
      kind,
      targets:
        kind === 'partition'
          ? [partitionTarget(src, path, f, topo)]
          : resolveTargets(src, [...path, 'targets'], f.targets, kind, topo),
      between: positive('between'),
      repair: repaired ? positive('repair') : null,
      loss: kind === 'link-lossy' ? ((f.loss as number) ?? 0) : 0,
      corrupt: kind === 'link-lossy' ? ((f.corrupt as number) ?? 0) : 0,
      ...(impair && { impair }),
      ...(kind === 'link-flap' && { flap: { down: f.down, up: f.up } }),
      step: f.step !== undefined ? d([...path, 'step'], f.step, signed) : null,
      freq: f.freq !== undefined ? d([...path, 'freq'], f.freq, Number) : null,
      line: src.lineOf(path),
    };
  });
  const { lossless, asserts } = resolveInvariants(src, raw.invariants, ['chaos', 'invariants']);
  return {
    topology: topo,
    fromNs,
    toNs,
    maxFaults: (raw.maxFaults as number) ?? 200,
    concurrent: (raw.concurrent as number | undefined) ?? Number.POSITIVE_INFINITY,
    failures,
    lossless,
    asserts,
  };
}

/** a link by its two ends in either order: two failures on one link never overlap */
const linkKey = (l: readonly string[]): string => [...l].sort().join('\n');

/** One drawn strike: on a node, a link, or (partition) the two groups it cuts apart. */
type Struck = { node: string } | { link: [string, string] } | { groups: [string[], string[]] };

/**
 * One run's faults, drawn from `seed`: each failure's components fail and recover in turn within the
 * window (a partition is one component: it strikes, heals, and strikes again, cutting a new draw of
 * `size` of its targets off each time); a failure that would strike a component already out (or a
 * link of a dead node) is left out, so no two faults overlap on a component (a partition's are the
 * links it cuts), and so is one that would strike while `concurrent` faults are out (a kill is out for
 * good). Sorted by time; repairs past `endNs` are left out (the fault lasts to the end; a flap ends
 * there). `maxFaults` keeps the earliest.
 */
export function drawFaults(
  model: ChaosModel,
  seed: number,
  endNs: number,
  /** nodes the scenario's own timeline kills, and when: nothing more strikes them or their links after */
  killed: ReadonlyMap<string, number> = new Map(),
): DrawnEntry[] {
  const rng = new Rng(seed);
  interface Candidate {
    spec: FailureSpec;
    failure: number;
    target: Struck;
    at: number;
    until: number;
  }
  const topo = model.topology;
  const strike = (t: Target): Struck | null => {
    if (!('cut' in t)) return t;
    // `size` of the targets, drawn without replacement
    const pool = [...t.cut];
    for (let i = 0; i < t.size; i++) {
      const j = i + Math.floor(rng.next() * (pool.length - i));
      [pool[i], pool[j]] = [pool[j], pool[i]];
    }
    const groups = partitionOf(topo, pool.slice(0, t.size));
    return groups[1].length > 0 ? { groups } : null;
  };
  const candidates: Candidate[] = [];
  for (const [failure, spec] of model.failures.entries()) {
    for (const target of spec.targets) {
      let t = model.fromNs + draw(spec.between, rng);
      while (t < model.toNs) {
        const until = spec.repair ? t + Math.max(1, draw(spec.repair, rng)) : Number.POSITIVE_INFINITY;
        const struck = strike(target);
        if (struck)
          candidates.push({ spec, failure, target: struck, at: Math.round(t), until: Math.round(until) });
        if (!Number.isFinite(until)) break;
        t = until + draw(spec.between, rng);
      }
    }
  }
  candidates.sort((a, b) => a.at - b.at);
  // when each component (node, link) is busy until; a killed node is busy forever, and so are its links
  const busy = new Map<string, number>();
  const entries: DrawnEntry[] = [];
  /** when each fault drawn so far ends */
  const out: number[] = [];
  let faults = 0;
  for (const c of candidates) {
    if (faults >= model.maxFaults) break;
    if (out.filter((until) => until > c.at).length >= model.concurrent) continue;
    const links =
      'groups' in c.target ? cutLinks(topo, ...c.target.groups) : 'link' in c.target ? [c.target.link] : [];
    const keys = 'node' in c.target ? [c.target.node] : links.map(linkKey);
    // a link fault needs both ends alive; a node fault needs the node free
    const dead = (n: string) => {
      const k = killed.get(n);
      return busy.has(`dead:${n}`) || (k !== undefined && k <= c.until);
    };
    const ends = 'node' in c.target ? [c.target.node] : links.flat();
    if (ends.some(dead) || keys.some((k) => (busy.get(k) ?? -1) > c.at)) continue;
    if ('node' in c.target && c.spec.kind === 'kill') busy.set(`dead:${c.target.node}`, 0);
    for (const k of keys) busy.set(k, c.spec.kind === 'kill' ? Number.POSITIVE_INFINITY : c.until);
    const base = { fault: faults, failure: c.failure, ...c.target };
    const e: DrawnEntry = { at: c.at, action: c.spec.kind, ...base };
    if (c.spec.kind === 'link-lossy') {
      if (c.spec.loss > 0) e.loss = c.spec.loss;
      if (c.spec.corrupt > 0) e.corrupt = c.spec.corrupt;
    }
    if (c.spec.impair) Object.assign(e, c.spec.impair);
    if (c.spec.flap) {
      Object.assign(e, c.spec.flap);
      e.until = `${Math.min(c.until, endNs)}ns`;
      e.seed = Math.floor(rng.next() * 2 ** 31);
    }
    if (c.spec.step) e.step = `${Math.round(draw(c.spec.step, rng))}ns`;
    if (c.spec.freq) e.freq = Math.round(draw(c.spec.freq, rng) * 1000) / 1000;
    entries.push(e);
    out.push(c.spec.kind === 'kill' ? Number.POSITIVE_INFINITY : c.until);
    const repair = REPAIRED[c.spec.kind];
    if (repair && c.until <= endNs) entries.push({ at: c.until, action: repair, ...base });
    faults++;
  }
  return entries.sort((a, b) => a.at - b.at || a.fault - b.fault);
}

/**
 * A partition's target: `size` of its targets (nodes) cut off together, or its two `groups` (names,
 * roles or globs), which must be apart and have a link between them.
 */
function partitionTarget(
  src: ScenarioSource,
  path: Array<string | number>,
  f: Record<string, unknown>,
  topo: Topology,
): Target {
  const names = (at: Array<string | number>, raw: unknown) =>
    resolveTargets(src, at, raw, 'partition', topo).map((t) => (t as { node: string }).node);
  if (f.groups !== undefined) {
    if (f.targets !== undefined || f.size !== undefined)
      throw src.error(
        [...path, 'groups'],
        'partition takes groups (two groups cut apart) or targets and size (nodes cut off), not both',
      );
    const raw = f.groups as unknown[][];
    const groups = raw.map((g, i) => names([...path, 'groups', i], g)) as [string[], string[]];
    const both = groups[0].find((n) => groups[1].includes(n));
    if (both !== undefined) throw src.error([...path, 'groups'], `'${both}' is in both groups`);
    if (cutLinks(topo, groups[0], groups[1]).length === 0)
      throw src.error(
        [...path, 'groups'],
        'no link runs between the groups: the partition would cut nothing',
      );
    return { groups };
  }
  const cut = names([...path, 'targets'], f.targets);
  const size = (f.size as number | undefined) ?? 1;
  if (size > cut.length)
    throw src.error([...path, 'size'], `${size} nodes cut off together, but the targets name ${cut.length}`);
  return { cut, size };
}

/**
 * link-impair's fields, checked as the timeline checks them (on the first target's link: the same
 * rate bound on every link of a class) and kept as written, for the timeline entries it draws.
 */
function impairFields(
  src: ScenarioSource,
  path: Array<string | number>,
  f: Record<string, unknown>,
  topo: Topology,
): FailureSpec['impair'] {
  const out: NonNullable<FailureSpec['impair']> = {};
  for (const k of IMPAIR_FIELDS) if (f[k] !== undefined) out[k] = f[k];
  if (Object.keys(out).length === 0)
    throw src.error(
      [...path, 'kind'],
      'link-impair needs an impairment: delay, loss, duplicate, reorder, corrupt or rate',
    );
  const slowest = Math.min(...topo.links.map((l) => l.rateBps));
  impairmentOf(src, path, f, slowest);
  if (f.delay !== undefined) delayOf(src, [...path, 'delay'], f.delay);
  if (f.reorder !== undefined && f.delay === undefined)
    throw src.error([...path, 'reorder'], 'reordering sends frames without the delay: it needs a delay');
  return out;
}

/** The distribution at `path` (a value, or `uniform(a, b)`, ...), its mistakes named with the field. */
function distAt(src: ScenarioSource, path: Array<string | number>, v: unknown, unit: (s: string) => number) {
  try {
    return parseDist(v as string | number, unit);
  } catch (err) {
    throw src.error(path, (err as Error).message);
  }
}

/** The settings a failure of `kind` needs and those it must not have, each named with its field. */
function checkFailureFields(
  src: ScenarioSource,
  path: Array<string | number>,
  f: Record<string, unknown>,
  kind: FailureKind,
): void {
  if ((kind === 'clock-step' || kind === 'clock-freq') && !src.data.clocks)
    throw src.error([...path, 'kind'], `'${kind}' needs a clocks: section (emulated oscillators)`);
  if (kind === 'clock-step' && f.step === undefined)
    throw src.error([...path, 'step'], 'clock-step needs step');
  if (kind === 'clock-freq' && f.freq === undefined)
    throw src.error([...path, 'freq'], 'clock-freq needs freq');
  if (kind === 'link-lossy' && f.loss === undefined && f.corrupt === undefined)
    throw src.error([...path, 'loss'], 'link-lossy needs loss (and/or corrupt)');
  // a setting of another kind would be drawn and written into the timeline, and do nothing
  for (const [field, owners] of FAILURE_SETTINGS)
    if (f[field] !== undefined && !(owners as readonly string[]).includes(kind))
      throw src.error([...path, field], `${field} applies to ${owners.join(' and ')} failures, not ${kind}`);
  if (kind === 'link-lossy')
    for (const field of ['loss', 'corrupt'] as const)
      if (typeof f[field] === 'object')
        throw src.error(
          [...path, field],
          `link-lossy takes ${field} as a probability; a model is link-impair's`,
        );
  if (kind === 'link-flap')
    for (const k of ['down', 'up'] as const) {
      if (f[k] === undefined)
        throw src.error([...path, k], `link-flap needs ${k}: how long the link stays ${k} each time`);
      distAt(src, [...path, k], f[k], parseDurationNs);
    }
  if (f.targets === undefined && !(kind === 'partition' && f.groups !== undefined))
    throw src.error(
      [...path, 'targets'],
      kind === 'partition'
        ? 'partition needs targets (the nodes it may cut off) or groups (two groups to cut apart)'
        : `${kind} needs targets: the components it strikes`,
    );
}
