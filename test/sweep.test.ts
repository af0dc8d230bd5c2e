/**
 * The sweep's grid and tables, without running fabrics: value lists split at commas outside
 * parentheses, the grid in order (first axis slowest), and the CSV and Markdown tables.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { grid, parseAxis, writeTables } from '../orchestrator/studies/sweep.js';
import { tempOut } from './helpers.js';

describe('sweep grid', () => {
  it('splits value lists at commas outside parentheses', () => {
    expect(parseAxis('workload.load=0.2,0.5, 0.8')).toEqual({
      key: 'workload.load',
      values: ['0.2', '0.5', '0.8'],
    });
    expect(parseAxis('jitter.send=lognormal(200ns, 1),0')).toEqual({
      key: 'jitter.send',
      values: ['lognormal(200ns, 1)', '0'],
    });
    expect(() => parseAxis('seed')).toThrow(/expected key=value1,value2/);
    expect(() => parseAxis('seed=1,,2')).toThrow(/empty value/);
  });

  it('walks every combination, the first axis slowest', () => {
    const g = grid([parseAxis('a=1,2'), parseAxis('b=x,y,z')]);
    expect(g).toEqual([
      ['a=1', 'b=x'],
      ['a=1', 'b=y'],
      ['a=1', 'b=z'],
      ['a=2', 'b=x'],
      ['a=2', 'b=y'],
      ['a=2', 'b=z'],
    ]);
  });

  it('writes one row per point: swept values, then figures', () => {
    const out = tempOut('sweep');
    const axes = [parseAxis('ptp.timestamping=hardware,software')];
    const rows = [
      { point: ['ptp.timestamping=hardware'], dir: 'a', figures: { fct_p50_ns: 100, faithful: 'yes' } },
      { point: ['ptp.timestamping=software'], dir: 'b', figures: { fct_p50_ns: 120, faithful: 'yes' } },
    ];
    const md = writeTables(out, axes, rows);
    expect(readFileSync(join(out, 'sweep.csv'), 'utf8')).toBe(
      'ptp.timestamping,fct_p50_ns,faithful\nhardware,100,yes\nsoftware,120,yes\n',
    );
    expect(md.split('\n')).toEqual([
      '| ptp.timestamping | FCT p50 (ns) | faithful |',
      '| --- | --- | --- |',
      '| hardware | 100 | yes |',
      '| software | 120 | yes |',
    ]);
  });

  it('reads as a person would: done/planned, µs and KB by magnitude, no column no point fills', () => {
    const out = tempOut('sweep');
    const axes = [parseAxis('workload.load=0.2,0.6')];
    const figures = (done: number, fct: number, queue: number) => ({
      flows_completed: done,
      flows_planned: 65,
      flows_failed: 0,
      flows_unexplained: 65 - done,
      fct_p99_ns: fct,
      queue_p99_bytes: queue,
      clock_err_p99_ns: null,
      fastpass_alloc_latency_p99_ns: 337_739,
    });
    const rows = [
      { point: ['workload.load=0.2'], dir: 'a', figures: figures(65, 412_345, 15_000) },
      { point: ['workload.load=0.6'], dir: 'b', figures: figures(59, 16_000_000, 2_450_000) },
    ];
    const md = writeTables(out, axes, rows);
    expect(md.split('\n')).toEqual([
      '| workload.load | flows done/planned | flows failed | flows unexplained | FCT p99 (ms) | switch queue p99 (MB) | fastpass alloc latency p99 (µs) |',
      '| --- | --- | --- | --- | --- | --- | --- |',
      '| 0.2 | 65/65 | 0 | 0 | 0.412 | 0.015 | 338 |',
      '| 0.6 | 59/65 | 0 | 6 | 16 | 2.45 | 338 |',
    ]);
    // the CSV keeps the raw figures its column names say, and leaves out the empty column
    expect(readFileSync(join(out, 'sweep.csv'), 'utf8').split('\n')[0]).toBe(
      'workload.load,flows_completed,flows_planned,flows_failed,flows_unexplained,fct_p99_ns,queue_p99_bytes,fastpass_alloc_latency_p99_ns',
    );
  });
});
