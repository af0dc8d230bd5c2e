import { describe, expect, it } from 'vitest';
import { Rng } from '../core/random.js';
import { Scheduler } from '../core/scheduler.js';

function manual(start = 0) {
  const clock = { t: start };
  const sched = new Scheduler({ now: () => clock.t, realMs: (ns) => ns / 1e6 }, true);
  return { clock, sched };
}

/** The project's seeded PRNG, as a plain function. */
function prng(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.next();
}

describe('Scheduler', () => {
  it('starts with horizon and current at the clock time', () => {
    const { sched } = manual(1234);
    expect(sched.horizon).toBe(1234);
    expect(sched.current).toBe(1234);
    expect(sched.now()).toBe(1234);
    expect(sched.pending).toBe(0);
  });

  it('runs events in time order, ties in insertion order', () => {
    const { sched } = manual();
    const log: string[] = [];
    const rec = (now: number, name: string) => log.push(`${name}@${now}`);
    sched.at(300, rec, 'c');
    sched.at(100, rec, 'a1');
    sched.at(200, rec, 'b');
    sched.at(100, rec, 'a2');
    sched.at(100, rec, 'a3');
    sched.at(0, rec, 'z');
    sched.runDue(1000);
    expect(log).toEqual(['z@0', 'a1@100', 'a2@100', 'a3@100', 'b@200', 'c@300']);
    expect(sched.pending).toBe(0);
  });

  it('orders thousands of random events like a stable sort', () => {
    const { sched } = manual();
    const rnd = prng(42);
    const want: Array<{ t: number; i: number }> = [];
    const got: Array<{ t: number; i: number }> = [];
    for (let i = 0; i < 5000; i++) {
      // few distinct times so that many ties must keep their insertion order
      const t = Math.floor(rnd() * 200);
      want.push({ t, i });
      sched.at(t, (now, idx: number) => got.push({ t: now, i: idx }), i);
    }
    want.sort((x, y) => x.t - y.t || x.i - y.i);
    sched.runDue(1e9);
    expect(got).toEqual(want);
  });

  it('runs only events due at upTo and keeps the rest', () => {
    const { sched } = manual();
    const ran: number[] = [];
    for (const t of [10, 20, 30, 40]) sched.at(t, (now) => ran.push(now));
    sched.runDue(25);
    expect(ran).toEqual([10, 20]);
    expect(sched.pending).toBe(2);
    sched.runDue(30);
    expect(ran).toEqual([10, 20, 30]);
    sched.runDue(39.999);
    expect(ran).toEqual([10, 20, 30]);
    sched.runDue(40);
    expect(ran).toEqual([10, 20, 30, 40]);
  });

  it('uses the clock time when runDue has no argument', () => {
    const { clock, sched } = manual();
    const ran: number[] = [];
    sched.at(50, (now) => ran.push(now));
    sched.at(150, (now) => ran.push(now));
    clock.t = 100;
    sched.runDue();
    expect(ran).toEqual([50]);
  });

  it('passes the two arguments to the handler', () => {
    const { sched } = manual();
    let seen: unknown[] = [];
    const obj = { k: 1 };
    sched.at(
      5,
      (now, a, b) => {
        seen = [now, a, b];
      },
      'x',
      obj,
    );
    sched.runDue(5);
    expect(seen).toEqual([5, 'x', obj]);
    expect(seen[2]).toBe(obj);
  });

  it('does not run cancelled events and does not count them', () => {
    const { sched } = manual();
    const ran: string[] = [];
    const a = sched.at(10, () => ran.push('a'));
    sched.at(10, () => ran.push('b'));
    const c = sched.at(5, () => ran.push('c'));
    sched.cancel(a);
    sched.cancel(c);
    sched.cancel(null);
    sched.cancel(undefined);
    sched.runDue(100);
    expect(ran).toEqual(['b']);
    expect(sched.fidelity.eventsHandled).toBe(1);
  });

  it('lets a handler cancel a later event of the same batch', () => {
    const { sched } = manual();
    const ran: string[] = [];
    const later = sched.at(20, () => ran.push('later'));
    sched.at(10, () => {
      ran.push('first');
      sched.cancel(later);
    });
    sched.runDue(100);
    expect(ran).toEqual(['first']);
  });

  it('a cancelled timer that already ran stays harmless', () => {
    const { sched } = manual();
    let n = 0;
    const e = sched.at(1, () => n++);
    sched.runDue(1);
    sched.cancel(e);
    sched.runDue(100);
    expect(n).toBe(1);
  });

  it('runs events scheduled by handlers within the same runDue when due', () => {
    const { sched } = manual();
    const log: string[] = [];
    sched.at(10, (now) => {
      log.push(`a@${now}`);
      sched.at(now, (t) => log.push(`same@${t}`));
      sched.at(15, (t) => log.push(`later@${t}`));
      sched.at(500, (t) => log.push(`future@${t}`));
    });
    sched.at(12, (now) => log.push(`b@${now}`));
    sched.runDue(100);
    expect(log).toEqual(['a@10', 'same@10', 'b@12', 'later@15']);
    expect(sched.pending).toBe(1);
  });

  it('sets current to the stamp of the handled event and horizon to the latest stamp', () => {
    const { sched } = manual();
    const seen: Array<[number, number]> = [];
    sched.at(100, () => {
      seen.push([sched.current, sched.horizon]);
      // an event in the past runs with its own stamp but does not move the horizon back
      sched.at(40, () => seen.push([sched.current, sched.horizon]));
    });
    sched.at(70, () => seen.push([sched.current, sched.horizon]));
    sched.runDue(200);
    expect(seen).toEqual([
      [70, 70],
      [100, 100],
      [40, 100],
    ]);
    expect(sched.horizon).toBe(100);
    expect(sched.current).toBe(40);
  });

  it('after() counts from the later of horizon and clock', () => {
    const { clock, sched } = manual();
    sched.at(500, () => {});
    sched.runDue(500);
    clock.t = 200; // clock behind the horizon
    expect(sched.after(10, () => {}).t).toBe(510);
    clock.t = 900; // clock ahead of the horizon
    expect(sched.after(10, () => {}).t).toBe(910);
  });

  it('records how late each event ran in the fidelity monitor', () => {
    const { sched } = manual();
    sched.at(100, () => {});
    sched.at(250, () => {});
    sched.at(300, () => {});
    sched.runDue(300);
    const fid = sched.fidelity;
    expect(fid.eventsHandled).toBe(3);
    expect(fid.lateness.n).toBe(3);
    expect(fid.lateness.max).toBe(200);
    expect(fid.lateness.sum).toBe(200 + 50 + 0);
    const snap = fid.snapshot();
    expect(snap.eventsHandled).toBe(3);
    expect(snap.causalityMisses).toBe(0);
    expect(snap.lateness.n).toBe(3);
  });

  it('stop() drops pending events and makes runDue a no-op', () => {
    const { sched } = manual();
    let n = 0;
    sched.at(1, () => n++);
    sched.at(2, () => n++);
    sched.stop();
    expect(sched.pending).toBe(0);
    sched.at(3, () => n++);
    sched.runDue(100);
    expect(n).toBe(0);
  });

  it('a manual scheduler never runs events by itself', async () => {
    const { sched } = manual();
    let n = 0;
    sched.at(0, () => n++);
    await new Promise((r) => setTimeout(r, 5));
    expect(n).toBe(0);
    sched.runDue(0);
    expect(n).toBe(1);
  });

  it('keeps running the remaining events when the heap shrinks and grows', () => {
    const { sched } = manual();
    const ran: number[] = [];
    const push = (t: number) => sched.at(t, (now) => ran.push(now));
    for (const t of [9, 3, 7, 1]) push(t);
    sched.runDue(3);
    for (const t of [2, 8, 4]) push(t); // 2 is in the past relative to the horizon
    sched.runDue(10);
    expect(ran).toEqual([1, 3, 2, 4, 7, 8, 9]);
  });
});

describe('Scheduler quiet events (conservative mode)', () => {
  it('runs quiet and loud events in the one (time, key) order a single queue would, and tells their next times apart', () => {
    const rand = prng(11);
    const both = new Scheduler(null);
    const single = new Scheduler(null);
    const a: string[] = [];
    const b: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const t = Math.floor(rand() * 500);
      const quiet = rand() < 0.5;
      if (quiet) both.atQuiet(t, (now) => a.push(`${i}@${now}`));
      else both.at(t, (now) => a.push(`${i}@${now}`));
      single.at(t, (now) => b.push(`${i}@${now}`));
    }
    expect(both.pending).toBe(2000);
    both.runBefore(250);
    single.runBefore(250);
    expect(a).toEqual(b);
    both.runBefore(Number.POSITIVE_INFINITY);
    single.runBefore(Number.POSITIVE_INFINITY);
    expect(a).toEqual(b);
    expect(a.length).toBe(2000);
  });

  it('leaves quiet events out of the next loud time, and moves them out of a pause like the others', () => {
    const sched = new Scheduler(null);
    const ran: string[] = [];
    sched.atQuiet(100, (now) => ran.push(`sample@${now}`));
    const loud = sched.at(900, (now) => ran.push(`send@${now}`));
    expect(sched.nextTime()).toBe(100);
    expect(sched.nextLoudTime()).toBe(900);
    sched.cancel(loud);
    expect(sched.nextLoudTime()).toBe(Number.POSITIVE_INFINITY);
    sched.at(900, (now) => ran.push(`send@${now}`));
    sched.freeze(50, 500);
    expect(sched.nextTime()).toBe(500);
    sched.runBefore(1000);
    expect(ran).toEqual(['sample@500', 'send@900']);
  });

  it('is an ordinary event in dilated mode', () => {
    const { sched } = manual();
    const ran: number[] = [];
    sched.atQuiet(100, (now) => ran.push(now));
    expect(sched.nextLoudTime()).toBe(100);
    sched.runDue(200);
    expect(ran).toEqual([100]);
  });
});
