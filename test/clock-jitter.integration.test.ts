/**
 * `dcemu experiment clock-jitter --quick`: every scheme that declares a guarantee living on time runs
 * its scenario on ideal clocks, on PTP with software stamps and late sends, and on NTP-class clocks
 * without PTP; the figures (conservative mode: exact) say what each guarantee loses, and a plot per
 * figure draws it against the clock error.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dcemu, readJson, runPids, tempOut } from './helpers.js';

interface Study {
  kind: string;
  reproduction: { figures: Array<{ id: string; mean: number | null }> };
}

describe('dcemu experiment clock-jitter', () => {
  it('measures what each timing guarantee loses as the clocks get worse, and plots it against the clock error', async () => {
    const out = tempOut('clock-jitter');
    const r = await dcemu(['experiment', 'clock-jitter', '--quick', '--out', out]);
    expect(r.exitCode, r.stderr).toBe(0);
    const studies = readJson(join(out, 'clock-jitter.json')) as Study[];
    expect(studies.map((s) => s.kind).sort()).toEqual(['fastpass', 'harmony', 'top']);
    const fig = (kind: string, id: string) =>
      studies.find((s) => s.kind === kind)!.reproduction.figures.find((f) => f.id === id)!.mean;

    // the same oscillators in every scheme (one seed): PTP brings them within 1 µs after lock, the
    // unlocked start aside; without PTP they stay ~100 µs apart
    expect(fig('fastpass', 'clock_err_p99_ideal')).toBe(0);
    expect(fig('fastpass', 'locked_err_p99_ptp-sw-send-jitter')).toBeLessThan(1000);
    expect(fig('fastpass', 'clock_err_p99_ntp-class')).toBeGreaterThan(50_000);

    // Fastpass: timeslots are used on time only while clocks agree; NTP-class clocks make most late
    expect(fig('fastpass', 'late_ideal')).toBe(0);
    expect(fig('fastpass', 'queue_p99_kb_ideal')).toBeLessThan(0.5);
    expect(fig('fastpass', 'queue_p99_kb_ptp-sw-send-jitter')).toBeGreaterThan(1);
    expect(fig('fastpass', 'late_ntp-class')).toBeGreaterThan(100);
    expect(fig('fastpass', 'gbps_ntp-class')!).toBeLessThan(fig('fastpass', 'gbps_ideal')! - 1);

    // TOP: a sender judges a token's age by its own clock, so clock error drops valid tokens, by the
    // thousand once clocks are ~100 µs apart (the threshold is tens of µs)
    expect([fig('top', 'expired_valid_ideal'), fig('top', 'stale_used_ideal')]).toEqual([0, 0]);
    expect(fig('top', 'expired_valid_ptp-sw-send-jitter')).toBeGreaterThan(0);
    expect(fig('top', 'expired_valid_ntp-class')!).toBeGreaterThan(
      100 * fig('top', 'expired_valid_ptp-sw-send-jitter')!,
    );

    // Harmony measures intervals on one clock: offsets between hosts leave its bound and its failure
    // inference alone (a clock step does not: harmony.integration.test.ts)
    for (const d of ['ideal', 'ptp-sw-send-jitter', 'ntp-class'])
      expect([fig('harmony', `bound_violations_${d}`), fig('harmony', `failed_${d}`)], d).toEqual([0, 0]);

    for (const name of ['fastpass-late', 'top-expired_valid', 'harmony-bound_violations'])
      for (const ext of ['vl.json', 'svg', 'png'])
        expect(existsSync(join(out, 'plots', `${name}.${ext}`))).toBe(true);
    const spec = readJson(join(out, 'plots', 'top-expired_valid.vl.json'));
    expect(spec.encoding.x.title).toBe('clock error p99 over every slave and sample (µs, symlog)');
    expect(spec.data.values.map((v: { clocks: string }) => v.clocks)).toEqual([
      'ideal',
      'ptp-sw-send-jitter',
      'ntp-class',
    ]);
    expect(await runPids(out)).toEqual([]);
  });

  it('runs the schemes’ own scenarios, and says so when given one', async () => {
    const r = await dcemu(['experiment', 'clock-jitter', 'examples/fastpass.yaml', '--quick']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/clock-jitter: runs every scheme's own scenario; it takes none/);
  });
});
