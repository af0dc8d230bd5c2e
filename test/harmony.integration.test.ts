/**
 * Harmony end to end, as real processes in conservative mode (exact: figures are asserted as
 * measured): the bounded-queue guarantee on the example's traffic, checked by the switches and again
 * independently from queues.csv; Theorem 3.2's allocation efficiency for K = 1 and K = 8; and the
 * fault paths: a spine killed and a lossy link, a receiver host killed mid-message, a host clock
 * stepped.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { allocationEfficiency as f, ROUNDS, roundsScenario } from './fixtures/harmony-rounds.mjs';
import { quickExperiment, runScenario, tempOut } from './helpers.js';

const run = runScenario;

/**
 * The example's traffic without the background, on the testbed's 8 servers (2 leaves of 4), 1 ms of
 * arrivals (128 KB messages at B/K take ~0.85 ms: in flight at any time past the first 0.1 ms)
 */
const SHORT = [
  '--set',
  'workload.background=null',
  '--set',
  'topology.leaves=2',
  '--set',
  'workload.duration=1ms',
  '--set',
  'run.drain=3ms',
  '--set',
  'clocks={offset: 0ns, freq: 0}',
];

describe('Harmony', () => {
  // One run for the bound and the small clock faults: the example's traffic on ideal clocks, with h2's
  // clock stepped 2 µs and h6's set 10 ppm fast at 0.6 ms (ridden out: the run is the bound's as well)
  let small: Awaited<ReturnType<typeof run>>;
  beforeAll(async () => {
    small = await run('harmony-clock-small', 'examples/harmony.yaml', [
      ...SHORT,
      '--set',
      'timeline=[{at: 0.6ms, action: clock-step, node: h2, step: 2us}, {at: 0.6ms, action: clock-freq, node: h6, freq: 10}]',
    ]);
  });

  it('keeps every data queue within the Theorem 3.1 bound and completes every message', () => {
    // Harmony alone: the independent check below reads queues.csv, which has every class
    const { out, s } = small;
    const h = s.harmony;
    expect(h).toMatchObject({
      K: 8,
      switchesOnPath: 3,
      // #H (K − 1) p = 3 · 7 · 1500
      queueBoundBytes: 31_500,
      // #H (#H + 1)(K − 1)/2 · p/B = 42 · 1.2 µs at 10 Gbit/s, and δadmission five times that
      delayBoundNs: 50_400,
      deltaAdmissionNs: 252_000,
      boundViolations: 0,
      congestionDrops: 0,
    });
    expect(h.maxQueueBytes).toBeGreaterThan(0);
    expect(h.maxQueueBytes).toBeLessThanOrEqual(h.queueBoundBytes);
    expect(h.maxQueueingDelayNs).toBeLessThanOrEqual(h.delayBoundNs);
    expect(h.messages.submitted).toBe(s.flows.planned);
    expect(h.messages.completed).toBe(h.messages.submitted);
    expect(h.messages).toMatchObject({ failed: 0, rejected: 0, bestEffort: 0, open: 0 });
    expect(s.flows.completed).toBe(s.flows.planned);
    expect(h.allocation.extraGrants).toBeGreaterThan(0);
    expect(h.slowdown.p50).toBeGreaterThanOrEqual(1);
    // no fallback: the application's view is Harmony's
    expect(h.slowdownFallback.messages).toBe(0);
    expect(h.slowdownAll).toEqual({ messages: h.messages.completed, ...h.slowdown });
    // exact: conservative mode gives these figures on every machine: messages, the largest queue (it
    // counts frames committed to the transmit pipeline until their transmission starts: 3 frames
    // ahead), rsvps sent, rejected in the network
    expect([s.flows.planned, h.maxQueueBytes, h.allocation.rsvpSent, h.allocation.rejectedInNetwork]).toEqual(
      [31, 4500, 248, 79],
    );
    // independently: the sampled occupancy of every switch port (all classes) never passed the bound
    const rows = readFileSync(join(out, 'queues.csv'), 'utf8').trim().split('\n').slice(1);
    const switchRows = rows.filter((l) => /^(leaf|spine)/.test(l));
    expect(switchRows.length).toBeGreaterThan(100);
    const max = Math.max(...switchRows.map((l) => Number(l.split(',')[4])));
    expect(max).toBeGreaterThan(0);
    expect(max).toBeLessThanOrEqual(h.queueBoundBytes);
  });

  // rounds 30 µs (K = 8) and 15 µs (K = 1) apart: every round's messages are done before the next
  // (the same rejects as rounds 100 µs and 40 µs apart), so the rsvps are as many as ever: 640 and 400
  it.each(ROUNDS)(
    'Theorem 3.2: at K = %i, the share of rsvps not rejected in the network is f(K, C) within 5 points',
    async (K, trials, spacingUs) => {
      // one-shot rounds: the 4 hosts under leaf0 each receive K rsvps at once from receivers under the
      // other leaves, through C = 4 spines; single-frame messages end before the next round
      const file = join(tempOut(`harmony-thm32-k${K}`), 'scenario.yaml');
      writeFileSync(file, roundsScenario(K, trials, spacingUs));
      const { s } = await run(`harmony-thm32-run-k${K}`, file);
      const a = s.harmony.allocation;
      expect(a.rsvpSent).toBe(4 * K * trials);
      expect(a.rejectedAtHost + a.rejectedBySender).toBe(0);
      expect(Math.abs(a.notRejectedInNetwork - f(K, 4))).toBeLessThan(0.05);
      // Theorem 3.1 on the same run: #H (K − 1) p, so at K = 1 no data frame may ever wait behind
      // another (a 0-byte bound any queue breaks)
      const h = s.harmony;
      expect(h.queueBoundBytes).toBe(3 * (K - 1) * 1500);
      expect([h.boundViolations, h.congestionDrops]).toEqual([0, 0]);
      expect(h.maxQueueBytes).toBeLessThanOrEqual(h.queueBoundBytes);
      // rejected in the network is the only way a message fails here, and each is reported
      expect(s.harmony.messages.rejected).toBe(a.rejectedInNetwork);
      expect(s.harmony.messages.completed + a.rejectedInNetwork).toBe(a.rsvpSent);
    },
  );

  it('drives K = 1 and K = 2 ports at 0.9 load within Theorem 3.1; best-effort fallbacks break both bounds by one frame per hop at most', async () => {
    // 4 hosts in 2 racks under 2 spines (the fewest whose messages cross racks; the bound's #H is 3 as on
    // the testbed's 8 servers, at under half the datagrams), the paper's reject rule: every port busy,
    // the K = 1 bound is 0 B (no data frame may ever find another ahead of it)
    const drive = (K: number, onReject: string) =>
      run(`harmony-drive-k${K}-${onReject}`, 'examples/harmony.yaml', [
        '--set',
        `scheme={kind: harmony, K: ${K}, onReject: ${onReject}}`,
        '--set',
        'topology={kind: leaf-spine, leaves: 2, hostsPerLeaf: 2, spines: 2}',
        '--set',
        'workload={pattern: all-to-all, fixedSize: 128KB, load: 0.9, duration: 0.5ms}',
        '--set',
        'run.drain=1ms',
      ]);
    // one after another: each run takes warm processes from the file's node pool (the beforeAll run left
    // 8 hosts and 6 switches there); four at once started 18 more, cold, for twice the CPU
    const k1 = await drive(1, 'give-up');
    const k2 = await drive(2, 'give-up');
    const k1be = await drive(1, 'best-effort');
    const k2be = await drive(2, 'best-effort');
    const figures = (r: typeof k1) => {
      const h = r.s.harmony;
      return [h.queueBoundBytes, h.maxQueueBytes, h.boundViolations, h.messages.bestEffort];
    };
    // Harmony alone: within the bound, at K = 1 with nothing ever ahead of a data frame, at K = 2 with a
    // frame ahead at most (1500 B of its 4500)
    expect(figures(k1)).toEqual([0, 0, 0, 0]);
    expect(figures(k2)).toEqual([4500, 1500, 0, 0]);
    // a rejected message sent best effort (class 0) beside them: a data frame waits out a best-effort
    // frame already on the wire (non-preemptive, §3.2), and the frame behind it on another VL catches
    // up: the bound #H(K − 1)p, which leaves best effort out, is broken at K = 1 and at K = 2 (where
    // Harmony alone stays within it); #H·K·p, one frame more per hop, holds
    expect(figures(k1be)).toEqual([0, 3000, 217, 4]);
    expect(figures(k2be)).toEqual([4500, 6000, 28, 2]);
    for (const r of [k1be, k2be])
      expect(r.s.harmony.maxQueueBytes).toBeLessThanOrEqual(3 * r.s.harmony.K * 1500);
  });

  it('infers failures from missing arrivals when a spine dies and a link turns lossy; every message ends', async () => {
    // the example's faults, sooner, on the testbed's 8 servers (2 leaves of 4): spine1 dies at 0.2 ms,
    // leaf1–spine3 is down 0.4–0.7 ms, leaf0–spine2 loses 1% of its frames 0.7–1.2 ms
    const { out, s } = await run('harmony-faults', 'examples/harmony-faults.yaml', [
      '--set',
      'topology.leaves=2',
      '--set',
      'workload.duration=1.5ms',
      '--set',
      'timeline=[{at: 0.2ms, action: kill, node: spine1}, {at: 0.4ms, action: link-down, link: [leaf1, spine3]}, {at: 0.7ms, action: link-up, link: [leaf1, spine3]}, {at: 0.7ms, action: link-lossy, link: [leaf0, spine2], loss: 0.01}, {at: 1.2ms, action: link-up, link: [leaf0, spine2]}]',
    ]);
    const h = s.harmony;
    expect(h.boundViolations).toBe(0);
    expect(h.congestionDrops).toBe(0);
    // every message ends: complete, or reported rejected / failed by Harmony with its reason
    expect(h.messages.open).toBe(0);
    expect(h.messages.completed + h.messages.rejected + h.messages.failed).toBe(h.messages.submitted);
    expect(s.flows.completed).toBe(h.messages.completed);
    expect(s.flows.unexplained).toBe(0);
    const given = readFileSync(join(out, 'outcomes.csv'), 'utf8').trim().split('\n').slice(1);
    expect(given.length).toBe(h.messages.rejected + h.messages.failed);
    for (const line of given) expect(line).toMatch(/,failed,"?harmony (rejected|failed) it \(4 asks/);
    const fault = (action: string) => h.faults.find((f: { action: string }) => f.action === action);
    const kill = fault('kill');
    expect(h.faults.map((f: { action: string }) => f.action)).toEqual(['kill', 'link-down', 'link-lossy']);
    for (const f of h.faults) {
      expect(f.unresolved, f.action).toBe(0);
      expect(f.messages, f.action).toBeGreaterThan(0);
    }
    expect(kill.target).toBe('spine1');
    // §3.2: a receiver infers the failure within 2× the delay bound after the data that did not come was due
    expect(h.inferred.silent).toBeGreaterThan(0);
    expect(h.maxInferenceNs).toBeGreaterThan(0);
    expect(h.maxInferenceNs).toBeLessThanOrEqual(2 * h.delayBoundNs);
    expect(kill.firstFailureNs).toBeLessThan(2 * h.delayBoundNs + 20_000);
    // the same failures, independently, as events: one per inference, with how late after due
    const events = readFileSync(join(out, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.kind === 'harmony-failure');
    const inferred = h.inferred as Record<string, number>;
    expect(events.length).toBe(Object.values(inferred).reduce((a, b) => a + b, 0));
    expect(events.filter((e) => e.why === 'silent').length).toBe(h.inferred.silent);
    expect(Math.max(...events.map((e) => e.afterDueNs ?? 0))).toBeCloseTo(h.maxInferenceNs, 3);
    expect(events.every((e) => e.t >= kill.t)).toBe(true);
    // lost frames show up as messages complete with bytes missing
    expect(h.inferred.incomplete).toBeGreaterThan(0);
    expect(h.messages.retried).toBeGreaterThan(0);
  });

  it('reports every message to a receiver killed mid-message, or to or from a dead leaf, as failed, and no other', async () => {
    // the example's fabric: h5 (under leaf1) and leaf3 (h12–h15) die at 0.6 ms, messages arriving until
    // 1.2 ms
    const { out, s } = await run('harmony-hostkill', 'examples/harmony.yaml', [
      '--set',
      'workload.background=null',
      '--set',
      'workload.duration=1.2ms',
      '--set',
      'run.drain=3ms',
      // asked again often enough that only the cut-off hosts' messages run out of asks
      '--set',
      'scheme={kind: harmony, onReject: give-up, retries: 8, deltaAdmission: 60us}',
      '--set',
      'timeline=[{at: 0.6ms, action: kill, node: h5}, {at: 0.6ms, action: kill, node: leaf3}]',
    ]);
    const h = s.harmony;
    const cutOff = new Set(['h5', 'h12', 'h13', 'h14', 'h15']);
    const flows = readFileSync(join(out, 'flows.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    // h5 reported what it sent up to its kill: what it finished by then completed, what it had in
    // progress ended with it
    const own = flows.filter((c) => c[1] === 'h5');
    const ownDone = own.filter((c) => c[14] === 'completed').length;
    const sent = flows.filter((c) => c[1] !== 'h5');
    const hit = sent.filter((c) => (cutOff.has(c[1]) || cutOff.has(c[2])) && c[14] !== 'completed');
    expect(hit.length).toBeGreaterThan(0);
    // every message to or from a cut-off host ends as a failure or a reject, every other one completes
    expect(h.messages).toMatchObject({ open: 0, bestEffort: 0 });
    expect(h.messages.failed).toBeGreaterThan(0);
    expect(h.messages.failed + h.messages.rejected).toBe(hit.length);
    expect(h.messages.senderHalted).toBe(own.length - ownDone);
    expect(h.messages.senderHalted).toBeGreaterThan(0);
    expect(h.messages.completed).toBe(sent.length - hit.length + ownDone);
    expect(h.messages.submitted).toBe(flows.length);
    expect(h.inferred.noAnswer + h.inferred.noComplete).toBeGreaterThan(0);
    expect(h.boundViolations).toBe(0);
    // each with a reason: the dead endpoint, or Harmony's own
    const given = readFileSync(join(out, 'outcomes.csv'), 'utf8').trim().split('\n').slice(1);
    expect(given.every((l) => /,failed,/.test(l))).toBe(true);
    expect(s.flows.unexplained).toBe(0);
  });

  it('rides out a 2 µs clock step and 10 ppm on a host; a 300 µs step fires its timers early', async () => {
    // the steps at 0.6 ms, the workload on to 1 ms: messages in flight across both steps
    expect(small.s.harmony.faults.map((f: { action: string }) => f.action)).toEqual([
      'clock-step',
      'clock-freq',
    ]);
    expect(small.s.harmony.inferred).toEqual({ silent: 0, incomplete: 0, noAnswer: 0, noComplete: 0 });
    // (a message rejected in the network on each of its asks goes best effort, and completes there)
    const sm = small.s.harmony.messages;
    expect(sm.completed + sm.bestEffort).toBe(sm.submitted);
    // the application's view: every message, those that fell back to best effort apart as well
    expect(small.s.harmony.slowdownAll.messages).toBe(sm.submitted);
    expect(small.s.harmony.slowdownFallback.messages).toBe(sm.bestEffort);
    expect(small.s.flows.completed).toBe(small.s.flows.planned);
    // a forward jump larger than the watchdogs' margins while h2 receives (h3's message since 0.69 ms):
    // h2's timers fire before the data was due
    const big = await run('harmony-clock-big', 'examples/harmony.yaml', [
      ...SHORT,
      '--set',
      'timeline=[{at: 0.75ms, action: clock-step, node: h2, step: 300us}]',
    ]);
    const b = big.s.harmony;
    expect(b.inferred.silent + b.inferred.noAnswer + b.inferred.noComplete).toBeGreaterThan(0);
    // spurious, yet harmless to the guarantee: retried and done
    expect(b.boundViolations).toBe(0);
    expect(b.messages.open).toBe(0);
    expect(big.s.flows.completed).toBe(big.s.flows.planned);
  });
});

/**
 * --quick's runs on 4 hosts in 2 racks under 2 spines, not the testbed's 8 servers under 4: the fewest
 * processes whose messages cross racks, and half the messages of harmony-load's calibration run (its
 * ~670 µs gaps make it the longest run): under half the datagrams of 8 servers, every behaviour the tests
 * below check still there
 */
const FOUR_HOSTS = ['--set', 'topology.hostsPerLeaf=2', '--set', 'topology.spines=2'];

describe('dcemu experiment harmony-load', () => {
  it('measures the sustainable load past the paper’s 0.9 under both readings of a reject, on §5’s workload, with each undone as an ablation (--quick)', async () => {
    // --quick's 1 ms of arrivals and loads 0.3 and 0.99 on FOUR_HOSTS
    const { stdout, rep, fig } = await quickExperiment('harmony-load', FOUR_HOSTS);
    // the headline names its reading; reading B carries the paper's value beside it too
    expect(rep.figures[0]).toMatchObject({ id: 'sustainable_a', paper: 0.9 });
    expect(rep.figures[0].label).toContain('reading A');
    expect(rep.figures[2]).toMatchObject({ id: 'sustainable_b', paper: 0.9 });
    // reading A sustains the highest load swept (0.99, past the paper's value: reported ≥); the first
    // reject final, or plain Poisson bursts, fail 0.99; multi-slot (its extras revocable) costs nothing
    expect([
      fig('sustainable_a'),
      fig('sustainable_b'),
      fig('sustainable_plain'),
      fig('sustainable_single'),
    ]).toEqual([0.99, 0.3, 0.3, 0.99]);
    expect([fig('sustainable_a_at_end'), fig('sustainable_b_at_end')]).toEqual([1, 0]);
    expect(stdout).toContain('Sustainable: ≥ 0.99 reading A');
    expect(fig('failed_b_99')).toBeCloseTo((100 * 1) / 38, 9);
    expect(fig('failed_plain_99')).toBeCloseTo((100 * 2) / 38, 9);
    // §5's window is δadmission, 5x the Theorem 3.1 bound here; it moves a share of the draws
    expect(fig('admissible_window_us')).toBe(252);
    expect(fig('moved_99')).toBeGreaterThan(fig('moved_30'));
    // what "sustained at 0.99" offered: the admissible workload moves starts past the duration, so
    // within it the messages offer less than the nominal load (two 128 KB messages per 252 µs window)
    expect(fig('offered_a_30')).toBe(0.2816);
    expect(fig('offered_a_99')).toBe(0.6656);
    expect(fig('offered_at_sustainable_a')).toBe(fig('offered_a_99'));
    // every reject broken down by the reason of its last ask, per reading: reading B's one was a switch's
    for (const r of ['senderSlot', 'network', 'receiver']) expect(fig(`rejects_a_${r}_99`)).toBe(0);
    expect(fig('rejects_b_network_99')).toBe(1);
    // the slowdown spread over each message's unloaded time (a calibration run), the line rate's beside:
    // the fastest message at 0.99 took within 1% of its unloaded time (1.006×)
    const spread = ['min', 'mean', 'p99', 'p999', 'max'].map((k) => fig(`slowdown_${k}_99`));
    expect(spread[0]).toBeCloseTo(1.006, 3);
    expect([...spread].sort((a, b) => a - b)).toEqual(spread);
    expect(fig('slowdown_line_min_99')).toBeGreaterThan(spread[0]);
  });

  it('sustains less with smaller RPCs at one delay bound, as Fig. 5d, under both readings (--quick)', async () => {
    const { stdout, rep, fig } = await quickExperiment('harmony-sizes', FOUR_HOSTS);
    // the paper's two values beside ours, under each reading: 0.65 at 8 KB, 0.9 at 128 KB (§5.1)
    expect(
      rep.figures
        .filter((f: { id: string }) => /^sustainable_[ab]_\d+KB$/.test(f.id))
        .map((f: { id: string; paper: number }) => [f.id, f.paper]),
    ).toEqual([
      ['sustainable_a_8KB', 0.65],
      ['sustainable_a_128KB', 0.9],
      ['sustainable_b_8KB', 0.65],
      ['sustainable_b_128KB', 0.9],
    ]);
    // 4 hosts (FOUR_HOSTS) for --quick's 0.3 ms: reading A sustains the highest load swept at both
    // sizes; with the first reject final 8 KB messages fail even 0.5
    expect([
      fig('sustainable_a_8KB'),
      fig('sustainable_a_128KB'),
      fig('sustainable_b_8KB'),
      fig('sustainable_b_128KB'),
    ]).toEqual([0.99, 0.99, 0, 0.99]);
    expect(stdout).toContain(
      '| 8KB | reading B (the first reject final, §3.1/§5) | < 0.5 | 3.2% (3/93) | 17.4% (31/178) |',
    );
    expect(stdout).toContain(
      '| 128KB | reading A (a reject asked again within δadmission, §3.2) | ≥ 0.99 | 0.0% (0/5) | 0.0% (0/11) |',
    );
  });
});
