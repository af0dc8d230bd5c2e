/**
 * The `timeline:` and `run.capture` sections, and actions injected into a running fabric
 * (`resolveInjected`), checked against the topology.
 */
import type { Impairment } from '../../core/impair.js';
import { draw, Rng } from '../../core/random.js';
import { parseDurationNs } from '../../core/time.js';
import type { Topology } from '../../topology/types.js';
import { ScenarioError } from '../engine/errors.js';
import { parseDist, signedNs } from './clocks.js';
import { DEFAULTS } from './defaults.js';
import { delayOf, impairmentOf, linkBetween } from './impairments.js';
import { schemaProblem } from './load.js';
import { CONTAINER_ACTIONS, TIMELINE_ACTIONS } from './schema.js';
import type { ScenarioSource } from './source.js';

const TIMELINE_ACTION_SET: ReadonlySet<string> = new Set(TIMELINE_ACTIONS);

export interface TimelineEvent {
  at: number;
  action: (typeof TIMELINE_ACTIONS)[number];
  node?: string;
  link?: [string, string];
  direction: 'both' | 'forward' | 'reverse';
  loss: number;
  corrupt: number;
  delayNs: number;
  /** the action that made this link action (partition, heal, link-flap), one of many */
  by?: 'partition' | 'heal' | 'link-flap' | 'node-impair';
  /** partition, heal: the groups it cut (healed), as the scenario named them: what a failure's cause names */
  groups?: string[][];
  /** link-impair: the impairments it sets over the link's own (a delay on top of the link's) */
  impair?: Impairment;
  /** clock-step: phase step of the node's oscillator, ns */
  stepNs: number;
  /** clock-freq: the node's oscillator frequency error from then on, ppm */
  freqPpm: number;
  /** line in the scenario file, for messages */
  line: number;
}

/** One captured egress port (`run.capture`): `node`'s port `port`, toward `peer`. */
export interface CapturePort {
  node: string;
  port: number;
  peer: string;
}

/**
 * Timeline entries added to a running fabric (the library's `inject`), checked as the scenario's own
 * timeline is; errors name `inject()` and the entry. `at` defaults to `now` (virtual ns).
 */
export function resolveInjected(
  base: ScenarioSource,
  topo: Topology,
  entries: Array<Record<string, unknown>>,
  now: number,
): TimelineEvent[] {
  const src: ScenarioSource = {
    file: 'inject()',
    data: { ...base.data, timeline: entries.map((e) => ({ at: now, ...e })) },
    lineOf: () => -1,
    // `timeline.2.link` reads `entry 2.link`: the user passed entries, not a timeline
    error: (path, problem) =>
      new ScenarioError(
        'inject()',
        -1,
        ['entry', ...path.slice(1)].join('.').replace('entry.', 'entry '),
        problem,
      ),
  };
  for (const [i, e] of entries.entries()) {
    if (!(TIMELINE_ACTION_SET as ReadonlySet<unknown>).has(e.action))
      throw src.error(
        ['timeline', i, 'action'],
        `unknown action '${e.action}' (one of ${[...TIMELINE_ACTION_SET].join(', ')})`,
      );
  }
  // the same checks as a scenario file's timeline (`at: '10Gbs'`, a negative time, a field too many)
  const problem = schemaProblem(src.data, base.file);
  if (problem) throw src.error(problem.path, problem.problem);
  const events = resolveTimeline(src, topo, Number.POSITIVE_INFINITY);
  // a pause without its resume would leave the process stopped to the end of the run, and beyond a
  // library run that never reaches that end
  for (const [i, ev] of events.entries()) {
    if (ev.action !== 'pause') continue;
    const resumed = [...(base.data.timeline ?? []), ...entries].some(
      (e) =>
        e.action === 'resume' &&
        e.node === ev.node &&
        (e.at === undefined || parseDurationNs(e.at as string) > ev.at),
    );
    if (!resumed)
      throw src.error(
        ['timeline', i, 'action'],
        `pause of ${ev.node} needs its resume (in the same inject call)`,
      );
  }
  return events;
}

/**
 * `run.capture`: a node stands for every link of it, `[a, b]` for the link(s) between a and b; either
 * way both directions, each direction being one egress port (a's toward b, b's toward a).
 */
export function resolveCapture(src: ScenarioSource, topo: Topology): CapturePort[] {
  const raw: unknown[] = src.data.run?.capture ?? [];
  const byName = new Map(topo.nodes.map((n) => [n.name, n]));
  const picked = new Set<string>();
  const pick = (node: string, port: number): void => {
    picked.add(`${node}:${port}`);
  };
  for (const [i, item] of raw.entries()) {
    const path = ['run', 'capture', i];
    if (typeof item === 'string') {
      const n = byName.get(item);
      if (!n) throw src.error(path, `no node named '${item}' in the topology`);
      for (const p of n.ports) {
        pick(n.name, p.index);
        pick(p.peer, p.peerPort);
      }
      continue;
    }
    const [a, b] = item as [string, string];
    const na = byName.get(a);
    if (!na) throw src.error([...path, 0], `no node named '${a}' in the topology`);
    if (!byName.has(b)) throw src.error([...path, 1], `no node named '${b}' in the topology`);
    const toward = na.ports.filter((p) => p.peer === b);
    if (toward.length === 0) throw src.error(path, `no link between '${a}' and '${b}'`);
    for (const p of toward) {
      pick(a, p.index);
      pick(b, p.peerPort);
    }
  }
  const out: CapturePort[] = [];
  for (const n of topo.nodes)
    for (const p of n.ports)
      if (picked.has(`${n.name}:${p.index}`)) out.push({ node: n.name, port: p.index, peer: p.peer });
  return out;
}

export function resolveTimeline(src: ScenarioSource, topo: Topology, endNs: number): TimelineEvent[] {
  const raw: Array<Record<string, unknown>> = src.data.timeline ?? [];
  const has = (name: unknown) => topo.nodes.some((n) => n.name === name);
  // `ifPresent` entries whose node this run does not have (an arbiter on a baseline run) are left out
  const present = raw
    .map((e, i) => [e, i] as const)
    .filter(
      ([e]) =>
        e.ifPresent !== true ||
        (e.node !== undefined ? has(e.node) : ((e.link as unknown[] | undefined) ?? []).every(has)),
    );
  return present.flatMap(([e, i]): TimelineEvent[] => {
    const path = ['timeline', i];
    const at = parseDurationNs(e.at as string);
    if (at > endNs)
      throw src.error([...path, 'at'], `at ${e.at} is after the run ends (workload duration + drain)`);
    const action = e.action as TimelineEvent['action'];
    if (action === 'partition' || action === 'heal') return partitionEvents(src, path, e, at, topo);
    if (action === 'link-flap') return flapEvents(src, path, e, at, topo, endNs);
    if (action === 'node-impair') return nodeImpairEvents(src, path, e, at, topo);
    for (const k of ['groups', 'down', 'up', 'until', 'seed'] as const)
      if (e[k] !== undefined)
        throw src.error(
          [...path, k],
          `${k} is for ${k === 'groups' ? 'partition and heal' : 'link-flap'}, not ${action}`,
        );
    const impairing = action === 'link-impair';
    if (!impairing) {
      // the impairment models are link-impair's; the other actions take plain values
      for (const k of ['loss', 'corrupt', 'delay'] as const)
        if (typeof e[k] === 'object' && e[k] !== null)
          throw src.error([...path, k], `'${action}' takes ${k} as a plain value; a model is link-impair's`);
      for (const k of ['duplicate', 'reorder', 'rate'] as const)
        if (e[k] !== undefined) throw src.error([...path, k], `${k} is link-impair's, not ${action}'s`);
    }
    const ev: TimelineEvent = {
      at,
      action,
      direction: (e.direction as TimelineEvent['direction']) ?? 'both',
      loss: impairing ? 0 : ((e.loss as number) ?? 0),
      corrupt: impairing ? 0 : ((e.corrupt as number) ?? 0),
      delayNs: !impairing && e.delay !== undefined ? parseDurationNs(e.delay as string) : 0,
      stepNs: e.step !== undefined ? signedNs(String(e.step)) : 0,
      freqPpm: (e.freq as number) ?? 0,
      line: src.lineOf(path),
    };
    if (action === 'clock-step' || action === 'clock-freq') {
      if (!src.data.clocks)
        throw src.error([...path, 'action'], `'${action}' needs a clocks: section (emulated oscillators)`);
      const field = action === 'clock-step' ? 'step' : 'freq';
      if (e[field] === undefined) throw src.error([...path, field], `'${action}' needs ${field}`);
    }
    if (
      action === 'kill' ||
      action === 'pause' ||
      action === 'resume' ||
      action === 'clock-step' ||
      action === 'clock-freq' ||
      CONTAINER_ACTIONS.has(action)
    ) {
      if (e.node === undefined) throw src.error([...path, 'node'], `'${action}' needs the node to ${action}`);
      if (!topo.nodes.some((n) => n.name === e.node))
        throw src.error([...path, 'node'], `no node named '${e.node}' in the topology`);
      ev.node = e.node as string;
    } else {
      ev.link = entryLink(src, path, e, topo);
      if (impairing) ev.impair = timelineImpairment(src, path, e, topo, ev.link);
    }
    return [ev];
  });
}

/** A link action's `link: [a, b]`, checked against the topology: both ends exist and a link joins them. */
function entryLink(
  src: ScenarioSource,
  path: Array<string | number>,
  e: Record<string, unknown>,
  topo: Topology,
): [string, string] {
  const link = e.link as [string, string] | undefined;
  if (!link) throw src.error([...path, 'link'], `'${e.action}' needs link: [nodeA, nodeB]`);
  const a = topo.nodes.find((n) => n.name === link[0]);
  if (!a) throw src.error([...path, 'link'], `no node named '${link[0]}' in the topology`);
  if (!a.ports.some((p) => p.peer === link[1]))
    throw src.error([...path, 'link'], `no link between '${link[0]}' and '${link[1]}'`);
  return [link[0], link[1]];
}

/** `link-impair`'s impairments: at least one, a delay added to the link's own (floor 0) */
function timelineImpairment(
  src: ScenarioSource,
  path: Array<string | number>,
  e: Record<string, unknown>,
  topo: Topology,
  [a, b]: [string, string],
): Impairment {
  const impair = impairmentOf(src, path, e, linkBetween(topo, a, b)?.rateBps) ?? {};
  if (e.delay !== undefined) impair.delay = { ...delayOf(src, [...path, 'delay'], e.delay), floorNs: 0 };
  if (impair.reorder && !impair.delay)
    throw src.error([...path, 'reorder'], 'reordering sends frames without the delay: it needs a delay');
  if (Object.keys(impair).length === 0)
    throw src.error(
      [...path, 'action'],
      "'link-impair' needs an impairment: delay, loss, duplicate, reorder, corrupt or rate",
    );
  return impair;
}

/** A link action that a partition, a heal or a flap made, at `at`. */
function linkEvent(
  at: number,
  action: 'link-down' | 'link-up',
  link: [string, string],
  by: NonNullable<TimelineEvent['by']>,
  line: number,
): TimelineEvent {
  return {
    at,
    action,
    link,
    direction: 'both',
    loss: 0,
    corrupt: 0,
    delayNs: 0,
    stepNs: 0,
    freqPpm: 0,
    line,
    by,
  };
}

/**
 * `partition` and `heal`: every link between two of the named sets of nodes goes down (up), each as
 * a link-down (link-up) at `at`, in the topology's order of links.
 */
function partitionEvents(
  src: ScenarioSource,
  path: Array<string | number>,
  e: Record<string, unknown>,
  at: number,
  topo: Topology,
): TimelineEvent[] {
  const action = e.action as 'partition' | 'heal';
  const groups = e.groups as string[][] | undefined;
  if (!groups)
    throw src.error([...path, 'groups'], `'${action}' needs groups: two or more sets of node names`);
  const groupOf = new Map<string, number>();
  for (const [g, names] of groups.entries())
    for (const [k, name] of names.entries()) {
      if (!topo.nodes.some((n) => n.name === name))
        throw src.error([...path, 'groups', g, k], `no node named '${name}' in the topology`);
      if (groupOf.has(name)) throw src.error([...path, 'groups', g, k], `'${name}' is in two groups`);
      groupOf.set(name, g);
    }
  for (const k of ['link', 'down', 'up', 'until', 'seed', 'loss', 'corrupt', 'delay'] as const)
    if (e[k] !== undefined)
      throw src.error([...path, k], `'${action}' cuts the links between its groups: no ${k}`);
  const cut = topo.links.filter((l) => {
    const [a, b] = [groupOf.get(l.a.node), groupOf.get(l.b.node)];
    return a !== undefined && b !== undefined && a !== b;
  });
  if (cut.length === 0)
    throw src.error([...path, 'groups'], `no link runs between the groups: '${action}' would cut nothing`);
  const line = src.lineOf(path);
  return cut.map((l) => ({
    ...linkEvent(at, action === 'partition' ? 'link-down' : 'link-up', [l.a.node, l.b.node], action, line),
    groups,
  }));
}

/**
 * `link-flap`: the link goes down at `at`, comes up after a draw of `down`, goes down again after a
 * draw of `up`, and so on; it is up from `until` on. The draws are seeded by the entry's `seed`, else
 * by the scenario's seed and the entry's place in the timeline: the same flaps on every run. (A chaos
 * run gives each flap its own `seed`, so a reproducer that drops other entries, or ends the flap
 * sooner, replays the same flaps: orchestrator/chaos/model.ts.)
 */
function flapEvents(
  src: ScenarioSource,
  path: Array<string | number>,
  e: Record<string, unknown>,
  at: number,
  topo: Topology,
  endNs: number,
): TimelineEvent[] {
  const link = entryLink(src, path, e, topo);
  for (const k of ['down', 'up', 'until'] as const)
    if (e[k] === undefined) throw src.error([...path, k], `'link-flap' needs ${k}`);
  const dist = (k: 'down' | 'up') => {
    try {
      return parseDist(e[k] as string | number, (v) => parseDurationNs(v));
    } catch (err) {
      throw src.error([...path, k], (err as Error).message);
    }
  };
  const down = dist('down');
  const up = dist('up');
  const until = parseDurationNs(e.until as string);
  if (!(until > at)) throw src.error([...path, 'until'], `until ${e.until} is not after at`);
  if (until > endNs)
    throw src.error([...path, 'until'], `until ${e.until} is after the run ends (workload duration + drain)`);
  const rng = new Rng(
    e.seed !== undefined
      ? (e.seed as number)
      : ((src.data.seed as number | undefined) ?? DEFAULTS.seed) * 7877 + Number(path[1]) * 131 + 5,
  );
  const line = src.lineOf(path);
  const out: TimelineEvent[] = [];
  // each period at least 1 ns: a draw at or below 0 (a normal's tail) moves on at once
  for (let t = at; t < until; ) {
    out.push(linkEvent(t, 'link-down', [link[0], link[1]], 'link-flap', line));
    t = Math.min(until, t + Math.max(1, Math.round(draw(down, rng))));
    out.push(linkEvent(t, 'link-up', [link[0], link[1]], 'link-flap', line));
    t += Math.max(1, Math.round(draw(up, rng)));
  }
  return out;
}

/**
 * `node-impair`: a link-impair on every link of the node, `direction` taken from the node (forward:
 * what it sends, reverse: what it receives, both by default), marked `by: node-impair`. With `types`
 * it is a switch that mistreats one class of frames (control, PTP, data); with `types: [control,
 * routing]` and a delay that keeps order, a control plane that lags while data is forwarded.
 */
function nodeImpairEvents(
  src: ScenarioSource,
  path: Array<string | number>,
  e: Record<string, unknown>,
  at: number,
  topo: Topology,
): TimelineEvent[] {
  const node = topo.nodes.find((n) => n.name === e.node);
  if (e.node === undefined) throw src.error([...path, 'node'], "'node-impair' needs the node");
  if (!node) throw src.error([...path, 'node'], `no node named '${e.node}' in the topology`);
  if (e.link !== undefined)
    throw src.error([...path, 'link'], "'node-impair' acts on every link of its node: no link");
  const line = src.lineOf(path);
  return node.ports.map((p) => {
    const link: [string, string] = [node.name, p.peer];
    return {
      ...linkEvent(at, 'link-up', link, 'node-impair', line),
      action: 'link-impair' as const,
      direction: (e.direction as TimelineEvent['direction']) ?? 'both',
      impair: timelineImpairment(src, path, { ...e, action: 'link-impair' }, topo, link),
    };
  });
}
