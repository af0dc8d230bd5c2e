/**
 * What every dcemu plot shares: the Vega-Lite schema it is written against, and a look that reads
 * in a results folder — long legend labels kept whole (port names, swept settings), titles on top.
 */
import type { Config } from 'vega-lite';

export const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

export const CONFIG: Config = {
  legend: { labelLimit: 400, titleLimit: 400 },
  axis: { titleLimit: 600 },
};

/** The top of a spec: schema, title, size, shared config. */
export function frame(
  title: string,
  width: number,
  height: number,
): { $schema: string; title: string; width: number; height: number; config: Config } {
  return { $schema: SCHEMA, title, width, height, config: CONFIG };
}

/**
 * A symmetric-log scale for values in [min, max] (signed clock errors; figures from 0 to thousands):
 * its domain rounded out to whole decades, ticks at 0 and ±1, ±10, ±100, ... (a symlog axis labels
 * no others well).
 */
export function symlog(min: number, max: number) {
  const out = (x: number) =>
    x === 0 ? 0 : Math.sign(x) * 10 ** Math.ceil(Math.log10(Math.max(1, Math.abs(x))));
  const lo = out(Math.min(0, min));
  const hi = out(Math.max(0, max));
  const values: number[] = [0];
  for (let d = 1; d <= Math.max(-lo, hi); d *= 10) {
    if (-d >= lo) values.push(-d);
    if (d <= hi) values.push(d);
  }
  return {
    scale: { type: 'symlog' as const, domain: [lo, hi] },
    axis: { values: values.sort((a, b) => a - b) },
  };
}
