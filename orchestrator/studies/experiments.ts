/**
 * One run of a scenario for a scheme's experiment (`dcemu experiment`): start the fabric with its
 * results in `dir`, run it to its end, stop it and hand back the summary; null when aborted (Ctrl-C),
 * the fabric stopped all the same.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Fabric, type Overrides } from '../api.js';
import type { Summary } from '../engine/collect.js';
import type { ExperimentOptions } from '../registry/types.js';

export async function runForSummary(
  file: string,
  dir: string,
  set: Overrides = {},
  signal?: AbortSignal,
): Promise<Summary | null> {
  const fabric = await Fabric.fromScenario(file, { set }).withOutput(dir).start();
  let done: Awaited<ReturnType<typeof fabric.stop>>;
  try {
    if (!signal?.aborted) await fabric.run(undefined, signal);
  } finally {
    done = await fabric.stop();
  }
  return signal?.aborted ? null : done.summary();
}

/** `key=value` settings (`--set`) as the overrides a run takes */
export function overridesOf(set: readonly string[]): Record<string, string> {
  return Object.fromEntries(set.map((s) => [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)]));
}

/**
 * An experiment's runs of its scenario, one per variant (`set` over the user's `--set`s), each into
 * `<out>/<name>`: their summaries in order, or null when aborted.
 */
export async function runVariants(
  opts: ExperimentOptions,
  label: string,
  variants: ReadonlyArray<{ name: string; set: Overrides }>,
): Promise<Summary[] | null> {
  mkdirSync(opts.out, { recursive: true });
  const extra = overridesOf(opts.set ?? []);
  const out: Summary[] = [];
  for (const v of variants) {
    if (opts.signal?.aborted) return null;
    opts.say(`${label}: ${v.name}`);
    const s = await runForSummary(opts.file, join(opts.out, v.name), { ...extra, ...v.set }, opts.signal);
    if (s === null) return null;
    out.push(s);
  }
  return out;
}
