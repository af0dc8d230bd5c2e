/**
 * The command line's option parsers: each turns an option's text into its value, or throws commander's
 * InvalidArgumentError, which it prints as one line naming the option.
 */
import { InvalidArgumentError } from 'commander';
import type { SyncMode } from '../../core/messages.js';
import { parseDurationNs } from '../../core/time.js';

export function integer(v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`expected a whole number, got '${v}'`);
  return n;
}

/** a duration option (`1ms`, `200us`, ns if a number), in ns */
export function duration(v: string): number {
  let ns: number;
  try {
    ns = Math.round(parseDurationNs(v));
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  if (!(ns >= 0)) throw new InvalidArgumentError(`expected a duration >= 0, got '${v}'`);
  return ns;
}

export function positive(v: string): number {
  const n = Number(v);
  if (!(n > 0)) throw new InvalidArgumentError(`expected a positive number, got '${v}'`);
  return n;
}

/** a comma-separated list of IPv4 subnets (a.b.c.d/n) */
export function subnets(v: string): string[] {
  const list = v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  for (const x of list)
    if (!/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(x))
      throw new InvalidArgumentError(`expected subnets such as 198.19.254.0/24, got '${x}'`);
  return list;
}

/** `node=machine,node=machine` (--place) */
export function placements(v: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of v.split(',')) {
    const item = part.trim();
    if (!item) continue;
    const eq = item.indexOf('=');
    if (eq <= 0 || eq === item.length - 1)
      throw new InvalidArgumentError(`expected node=machine (a swarm machine's hostname), got '${item}'`);
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

export function syncOption(opts: { sync?: string; tdf?: number }): SyncMode | undefined {
  const s = opts.sync;
  if (s === undefined) return undefined;
  if (s !== 'conservative' && s !== 'dilated')
    throw new InvalidArgumentError(`--sync must be conservative or dilated, got '${s}'`);
  if (s === 'conservative' && opts.tdf !== undefined)
    throw new InvalidArgumentError(
      '--tdf applies to --sync dilated only (conservative mode has no wall clock)',
    );
  return s;
}
