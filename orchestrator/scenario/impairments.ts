/**
 * Link impairments in a scenario (docs/scenarios.md#impairments): netem's set (core/impair.ts) on
 * the link classes (`links.host`, `links.fabric`), on single links or one direction of them
 * (`links.each`), and set over them by the timeline's `link-impair`. A link class's or a link's
 * `delay` may be a distribution: the link's delay varies per frame, and its least value is the
 * propagation delay the fabric's promises count on. In a timeline the delay is added to the link's.
 */
import { FrameType } from '../../core/frame.js';
import {
  DELAY_DISTS,
  type DelaySpec,
  delayFloorNs,
  type Impairment,
  type LossSpec,
} from '../../core/impair.js';
import { parseDurationNs, parseRateBps } from '../../core/time.js';
import type { TopoLink, Topology } from '../../topology/types.js';
import type { ScenarioSource } from './source.js';
import { duration, rate } from './units.js';

const probability = { type: 'number', minimum: 0, maximum: 1 };
const correlation = {
  type: 'number',
  minimum: 0,
  maximum: 1,
  description: "netem's correlation with the previous draw, 0..1 (default 0)",
};
const chance = (what: string) => ({
  description: `${what}: a probability, or { p, correlation }`,
  anyOf: [
    probability,
    {
      type: 'object',
      additionalProperties: false,
      required: ['p'],
      properties: { p: probability, correlation },
    },
  ],
});

/** `delay: { dist, mean, jitter, correlation, reorder }` */
const delayDistribution = {
  type: 'object',
  additionalProperties: false,
  required: ['dist', 'mean'],
  properties: {
    dist: {
      enum: [...DELAY_DISTS],
      description: "netem's shapes (constant, uniform, normal, pareto, paretonormal) and lognormal",
    },
    mean: { ...duration, description: 'the mean (ns: 1us)' },
    jitter: {
      ...duration,
      description:
        'the spread: half the width (uniform), the standard deviation (normal, lognormal), netem’s jitter (pareto, paretonormal)',
    },
    correlation,
    reorder: {
      type: 'boolean',
      description:
        'may a frame overtake one sent before it (netem with jitter; default true); false keeps the order',
    },
  },
};

const lossModel = {
  description:
    'a probability (independent loss), or { model: random, p, correlation }, { model: gilbert, p, r } (bursts: p good → bad, r bad → good, every frame lost in bad) or { model: gilbert-elliott, p, r, lossBad, lossGood } (netem gemodel: lossBad = 1 − h, lossGood = 1 − k)',
  anyOf: [
    probability,
    {
      type: 'object',
      additionalProperties: false,
      required: ['model', 'p'],
      properties: {
        model: { enum: ['random', 'gilbert', 'gilbert-elliott'] },
        p: probability,
        r: probability,
        lossBad: probability,
        lossGood: probability,
        correlation,
      },
    },
  ],
};

/** the frame types by the names a scenario gives them */
const TYPES: Record<string, number> = {
  data: FrameType.Data,
  ack: FrameType.Ack,
  keepalive: FrameType.Keepalive,
  control: FrameType.Control,
  ptp: FrameType.Ptp,
  routing: FrameType.Routing,
};

/** the impairment fields, for a link class, a link of `links.each` and `link-impair` */
export const impairmentProperties = (delayMeaning: string) => ({
  delay: {
    description: `${delayMeaning}: a duration, or a distribution { dist, mean, jitter, correlation, reorder }`,
    anyOf: [duration, delayDistribution],
  },
  loss: lossModel,
  duplicate: chance('the share of frames sent twice'),
  reorder: chance(
    'the share of frames sent without the delay, ahead of the delayed ones (netem reorder; needs a delay)',
  ),
  corrupt: chance('the share of frames corrupted (the receiver drops them)'),
  rate: {
    ...rate,
    description: "a rate below the link's: the port serializes at it (a port renegotiated down)",
  },
  types: {
    type: 'array',
    minItems: 1,
    items: { enum: Object.keys(TYPES) },
    description:
      'a gray failure: only frames of these types are impaired (data, ack, control, ptp, keepalive, routing); the others pass untouched',
  },
  flows: {
    ...probability,
    description:
      'a gray failure: only this share of flows is impaired, by a hash of source, destination and flow (an ECMP group’s buckets); the others pass untouched',
  },
});

/** `links.each`: one link, or one direction of it, with its own delay and impairments */
export const eachLinkSchema = {
  type: 'array',
  description:
    'single links with their own delay and impairments (over their class’s); `from` names one direction',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['link'],
    properties: {
      link: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        minItems: 2,
        maxItems: 2,
        description: 'the two node names at the ends of the link, e.g. [leaf0, spine1]',
      },
      from: { type: 'string', minLength: 1, description: 'only the direction from this end (default: both)' },
      ...impairmentProperties("the link's one-way delay"),
    },
  },
};

type Raw = Record<string, unknown>;
type Path = Array<string | number>;

/** a duration field, read as ns or the scenario's error at `path` */
function ns(src: ScenarioSource, path: Path, v: unknown): number {
  try {
    return parseDurationNs(v as string);
  } catch (err) {
    throw src.error(path, (err as Error).message);
  }
}

function chanceOf(v: unknown): { p: number; correlation: number } {
  return typeof v === 'number'
    ? { p: v, correlation: 0 }
    : { p: (v as Raw).p as number, correlation: ((v as Raw).correlation as number) ?? 0 };
}

/** `delay` as a distribution (a plain duration: constant); `floorNs` is what the link's propagation holds */
export function delayOf(src: ScenarioSource, path: Path, v: unknown): Omit<DelaySpec, 'floorNs'> {
  if (typeof v !== 'object' || v === null)
    return { dist: 'constant', meanNs: ns(src, path, v), jitterNs: 0, correlation: 0, reorder: true };
  const d = v as Raw;
  const spec = {
    dist: d.dist as DelaySpec['dist'],
    meanNs: ns(src, [...path, 'mean'], d.mean),
    jitterNs: d.jitter !== undefined ? ns(src, [...path, 'jitter'], d.jitter) : 0,
    correlation: (d.correlation as number) ?? 0,
    reorder: (d.reorder as boolean) ?? true,
  };
  if (spec.dist !== 'constant' && spec.jitterNs === 0)
    throw src.error([...path, 'jitter'], `a ${spec.dist} delay needs its jitter (the spread)`);
  if (spec.dist === 'lognormal' && spec.meanNs === 0)
    throw src.error([...path, 'mean'], 'a lognormal delay needs a mean above 0');
  return spec;
}

function lossOf(src: ScenarioSource, path: Path, v: unknown): LossSpec {
  if (typeof v === 'number') return { model: 'random', p: v, correlation: 0 };
  const l = v as Raw;
  const model = l.model as string;
  const p = l.p as number;
  if (model === 'random') {
    for (const k of ['r', 'lossBad', 'lossGood'])
      if (l[k] !== undefined)
        throw src.error([...path, k], `a random loss has only p and correlation, not ${k}`);
    return { model: 'random', p, correlation: (l.correlation as number) ?? 0 };
  }
  if (l.correlation !== undefined)
    throw src.error([...path, 'correlation'], `${model} loss has no correlation: its bursts are its states`);
  if (l.r === undefined)
    throw src.error([...path, 'r'], `${model} loss needs r, the chance to leave the bad state`);
  if (model === 'gilbert')
    for (const k of ['lossBad', 'lossGood'])
      if (l[k] !== undefined)
        throw src.error(
          [...path, k],
          `gilbert loses every frame in the bad state and none in the good: use gilbert-elliott for ${k}`,
        );
  return {
    model: 'gilbert-elliott',
    p,
    r: l.r as number,
    lossBad: (l.lossBad as number) ?? 1,
    lossGood: (l.lossGood as number) ?? 0,
  };
}

/**
 * The impairments a link class, a link or a `link-impair` entry names, except the delay (which the
 * caller places: in the link's propagation or on top of it); undefined when it names none.
 */
export function impairmentOf(
  src: ScenarioSource,
  path: Path,
  raw: Raw,
  linkRateBps?: number,
): Impairment | undefined {
  const out: Impairment = {};
  if (raw.loss !== undefined) out.loss = lossOf(src, [...path, 'loss'], raw.loss);
  if (raw.duplicate !== undefined) out.duplicate = chanceOf(raw.duplicate);
  if (raw.reorder !== undefined) out.reorder = chanceOf(raw.reorder);
  if (raw.corrupt !== undefined) out.corrupt = chanceOf(raw.corrupt);
  if (raw.rate !== undefined) {
    let bps: number;
    try {
      bps = parseRateBps(raw.rate as string);
    } catch (err) {
      throw src.error([...path, 'rate'], (err as Error).message);
    }
    if (!(bps > 0)) throw src.error([...path, 'rate'], 'a rate must be above 0');
    if (linkRateBps !== undefined && bps > linkRateBps)
      throw src.error(
        [...path, 'rate'],
        `${raw.rate} is above the link's own rate (${linkRateBps / 1e9} Gbit/s): an impairment only slows a port`,
      );
    out.rateBps = bps;
  }
  // the reach of a gray failure narrows the others: alone it impairs nothing
  const acts = Object.keys(out).length > 0 || raw.delay !== undefined;
  if (raw.types !== undefined) out.types = (raw.types as string[]).map((t) => TYPES[t]);
  if (raw.flows !== undefined) out.flowShare = raw.flows as number;
  if (!acts && (raw.types !== undefined || raw.flows !== undefined))
    throw src.error(
      [...path, raw.types !== undefined ? 'types' : 'flows'],
      'types and flows narrow an impairment: name what it does (loss, delay, ...)',
    );
  return Object.keys(out).length > 0 ? out : undefined;
}

/** One direction's impairments, from node `from` toward `to`. */
export interface DirectedImpairment {
  from: string;
  to: string;
  impair: Impairment;
  /** this direction's one-way delay, when `links.each` sets it */
  delay?: Omit<DelaySpec, 'floorNs'>;
}

export interface LinkImpairments {
  host?: Impairment;
  fabric?: Impairment;
  each: DirectedImpairment[];
  /** the delay above the propagation of each direction `links.each` gave a delay to, by `from>to` */
  delays: Record<string, DelaySpec>;
}

/**
 * A link class's impairments, and its propagation delay: the least its delay can be (a distribution's
 * floor), so that no frame arrives before the fabric's promises say it can.
 */
export function classImpairment(
  src: ScenarioSource,
  which: 'host' | 'fabric',
  rateBps: number,
): { propNs?: number; impair?: Impairment } {
  // its `rate` is the line rate, not an impairment's
  const { rate: _line, ...raw }: Raw = src.data.links?.[which] ?? {};
  const path = ['links', which];
  const impair: Impairment = impairmentOf(src, path, raw, rateBps) ?? {};
  if (typeof raw.delay === 'object' && raw.delay !== null) {
    const spec = delayOf(src, [...path, 'delay'], raw.delay);
    const floorNs = delayFloorNs(spec);
    impair.delay = { ...spec, floorNs };
    if (impair.reorder && !(spec.meanNs > floorNs))
      throw src.error(
        [...path, 'reorder'],
        'reordering sends frames without the delay: it needs a delay above the link’s least',
      );
    return { propNs: floorNs, impair };
  }
  if (impair.reorder)
    throw src.error(
      [...path, 'reorder'],
      'reordering sends frames without the delay: it needs a delay distribution',
    );
  return Object.keys(impair).length > 0 ? { impair } : {};
}

/** `links.each`, checked against the topology: each entry's directions with their impairments. */
export function eachLinkImpairments(src: ScenarioSource, topo: Topology): DirectedImpairment[] {
  const raw: Raw[] = src.data.links?.each ?? [];
  const out: DirectedImpairment[] = [];
  for (const [i, e] of raw.entries()) {
    const path = ['links', 'each', i];
    const [a, b] = e.link as [string, string];
    for (const [k, name] of [
      [0, a],
      [1, b],
    ] as const)
      if (!topo.nodes.some((n) => n.name === name))
        throw src.error([...path, 'link', k], `no node named '${name}' in the topology`);
    const link = linkBetween(topo, a, b);
    if (!link) throw src.error([...path, 'link'], `no link between '${a}' and '${b}'`);
    if (e.from !== undefined && e.from !== a && e.from !== b)
      throw src.error([...path, 'from'], `'${e.from}' is not an end of the link [${a}, ${b}]`);
    const impair = impairmentOf(src, path, e, link.rateBps) ?? {};
    const delay = e.delay !== undefined ? delayOf(src, [...path, 'delay'], e.delay) : undefined;
    if (impair.reorder && !(delay && delay.jitterNs + delay.meanNs > 0))
      throw src.error([...path, 'reorder'], 'reordering sends frames without the delay: it needs a delay');
    const ends: Array<[string, string]> =
      e.from === b
        ? [[b, a]]
        : e.from === a
          ? [[a, b]]
          : [
              [a, b],
              [b, a],
            ];
    for (const [from, to] of ends) out.push({ from, to, impair, ...(delay && { delay }) });
  }
  return out;
}

/** The link that joins `a` and `b`, either way round (undefined: none). */
export function linkBetween(topo: Topology, a: string, b: string): TopoLink | undefined {
  return topo.links.find((l) => (l.a.node === a && l.b.node === b) || (l.a.node === b && l.b.node === a));
}

/** the class a link belongs to: `host` with a host at an end, `fabric` between switches, none else (an arbiter's) */
export function linkClass(topo: Topology, a: string, b: string): 'host' | 'fabric' | null {
  const role = (name: string) => topo.nodes.find((n) => n.name === name)?.role;
  const roles = [role(a), role(b)];
  if (roles.includes('host')) return 'host';
  return roles.every((r) => r === 'switch') ? 'fabric' : null;
}

/**
 * Lowers each link that `links.each` gives a delay to the least delay either direction can have (the
 * two directions share one propagation delay: core/port.ts), and returns each direction's delay
 * above that floor (by `from>to`): its own from `links.each`, else its class's.
 */
export function applyEachDelays(topo: Topology, imp: LinkImpairments): Record<string, DelaySpec> {
  // (eachLinkImpairments checked that a link joins each entry's ends)
  const touched = new Set<TopoLink>();
  for (const d of imp.each) if (d.delay) touched.add(linkBetween(topo, d.from, d.to)!);
  const specs: Record<string, DelaySpec> = {};
  for (const link of touched) {
    const cls = linkClass(topo, link.a.node, link.b.node);
    const own = (cls && imp[cls]?.delay) || {
      dist: 'constant' as const,
      meanNs: link.propNs,
      jitterNs: 0,
      correlation: 0,
      reorder: true,
    };
    const dirs = [
      [link.a.node, link.b.node],
      [link.b.node, link.a.node],
    ].map(([from, to]) => ({
      from,
      to,
      delay: imp.each.find((d) => d.from === from && d.to === to && d.delay)?.delay ?? own,
    }));
    const floorNs = Math.min(...dirs.map((d) => delayFloorNs(d.delay)));
    link.propNs = floorNs;
    for (const d of dirs)
      if (d.delay.dist !== 'constant' || d.delay.meanNs > floorNs)
        specs[`${d.from}>${d.to}`] = { ...d.delay, floorNs };
  }
  return specs;
}

/**
 * The impairments of the direction from `from` toward `to`: its class's, with what `links.each` names
 * for it over them, and its delay above the link's propagation; undefined on a clean direction.
 */
export function directionImpairment(
  topo: Topology,
  imp: LinkImpairments,
  from: string,
  to: string,
): Impairment | undefined {
  const cls = linkClass(topo, from, to);
  const base: Impairment = { ...(cls ? imp[cls] : undefined) };
  for (const d of imp.each) if (d.from === from && d.to === to) Object.assign(base, d.impair);
  const key = `${from}>${to}`;
  if (key in imp.delays) base.delay = imp.delays[key];
  else if (
    imp.each.some((d) => d.delay && ((d.from === from && d.to === to) || (d.from === to && d.to === from)))
  )
    delete base.delay;
  return Object.keys(base).length > 0 ? base : undefined;
}
