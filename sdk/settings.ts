/**
 * Reading a scheme's settings (`scheme:` in a scenario) with their units, the way every scheme does:
 * a value is parsed in its unit ("2us", "10Gbps", "64KB", or a bare number of ns, bit/s or bytes),
 * must be > 0, and a bad one is the scenario's error naming the file, the line and `scheme.<path>`.
 */
import { parseBytes, parseDurationNs, parseRateBps } from '../core/time.js';
import type { ScenarioSource } from '../orchestrator/scenario/source.js';

export type Unit = 'duration' | 'rate' | 'bytes';
const PARSE: Record<Unit, (v: string | number) => number> = {
  duration: parseDurationNs,
  rate: parseRateBps,
  bytes: parseBytes,
};

/** `v` (the value at `scheme.<path>`) in its unit (ns, bit/s or bytes), > 0; else the scenario's error there. */
export function positive(src: ScenarioSource, path: string[], v: string | number, unit: Unit): number {
  let n: number;
  try {
    n = PARSE[unit](v);
  } catch (err) {
    throw src.error(['scheme', ...path], (err as Error).message);
  }
  if (!(n > 0)) throw src.error(['scheme', ...path], `must be > 0, got ${v}`);
  return n;
}

/** The setting at `scheme.<path>` in its unit, > 0; `dflt` when the scenario leaves it out. */
export function setting(src: ScenarioSource, path: string[], unit: Unit, dflt: number): number {
  let v: unknown = src.data.scheme;
  for (const key of path) v = v === undefined || v === null ? undefined : (v as Record<string, unknown>)[key];
  return v === undefined ? dflt : positive(src, path, v as string | number, unit);
}
