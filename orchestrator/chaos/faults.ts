/**
 * A run's drawn faults as reports name them (chaos.md, JUnit, a reproducer's header), and the smaller
 * versions of one fault that the reduction of a failing run tries (index.ts).
 */
import { formatNs, parseDurationNs } from '../../core/time.js';
import { type ChaosModel, type DrawnEntry, REPAIR_ACTIONS } from './model.js';
import { cutLinks, partitionOf } from './partition.js';

/** what a link-lossy or link-impair sets, named beside it: a gray failure reads as what it does */
const SETTINGS = ['loss', 'corrupt', 'delay', 'duplicate', 'reorder', 'rate', 'types', 'flows'] as const;

const settingText = (v: unknown): string =>
  Array.isArray(v) ? v.join('/') : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);

/** A drawn fault as a report names it: its kind, what it strikes, and when. */
export function describeFault(e: DrawnEntry): string {
  const what = e.groups
    ? e.groups.map((g) => `[${g.join(', ')}]`).join(' | ')
    : (e.node ?? e.link!.join('–'));
  const until = e.until !== undefined ? ` to ${formatNs(parseDurationNs(e.until))}` : '';
  const set = SETTINGS.filter((k) => e[k] !== undefined).map((k) => `${k} ${settingText(e[k])}`);
  return `${e.action} ${what}${set.length > 0 ? ` (${set.join(', ')})` : ''} at ${formatNs(e.at)}${until}`;
}

/** The faults of a draw (not their repairs), each as describeFault names it, in time order. */
export function describeFaults(entries: readonly DrawnEntry[]): string[] {
  return entries.filter((e) => !REPAIR_ACTIONS.has(e.action)).map(describeFault);
}

/**
 * Smaller versions of one drawn fault (its entries: the fault and its repair), for reducing a
 * reproducer: a partition that cuts off half its nodes (either half; of two named groups, half the
 * first), a flap that ends halfway (its seed kept: the same first flaps). None for other kinds.
 */
export function smallerFaults(entries: readonly DrawnEntry[], model: ChaosModel): DrawnEntry[][] {
  const first = entries[0];
  if (first.action === 'partition' && first.groups) {
    const [cut, other] = first.groups;
    if (cut.length < 2) return [];
    const named = model.failures[first.failure]?.targets.some((t) => 'groups' in t) === true;
    const half = Math.ceil(cut.length / 2);
    return [cut.slice(0, half), cut.slice(half)]
      .map((sub) => (named ? ([sub, other] as [string[], string[]]) : partitionOf(model.topology, sub)))
      .filter((groups) => cutLinks(model.topology, ...groups).length > 0)
      .map((groups) => entries.map((e) => ({ ...e, groups })));
  }
  if (first.action === 'link-flap' && first.until !== undefined) {
    const len = parseDurationNs(first.until) - first.at;
    if (len < 2) return [];
    return [[{ ...first, until: `${first.at + Math.floor(len / 2)}ns` }]];
  }
  return [];
}
