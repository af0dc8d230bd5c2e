/**
 * The library API as a user's test would drive it: build a fabric from YAML, run it in steps, inject
 * faults while it runs, read the results; `await using` leaves nothing running even when the test
 * throws; and the user-test example (examples/user-test) passes against the package by its name.
 */
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { Fabric, ScenarioError, withNodePool } from '../orchestrator/api.js';
import { ownNodePids, ROOT, tempOut } from './helpers.js';

const STAR = `name: api-star
seed: 2
topology: { kind: star, hosts: 4 }
transport: { kind: udp }
workload: { pattern: all-to-all, fixedSize: 20KB, load: 0.3, duration: 200us }
`;

describe('library API', () => {
  it('runs in exact steps, takes faults while it runs and gives the results', async () => {
    await using fabric = await Fabric.fromYaml(STAR, { set: { 'workload.load': 0.2 } })
      .withOutput(tempOut('api'))
      .start();
    expect(fabric.now()).toBe(0);
    await fabric.runFor('50us');
    expect(fabric.now()).toBe(50_000);
    fabric.inject({ action: 'link-down', link: ['sw0', 'h1'] });
    fabric.inject({ action: 'link-up', link: ['sw0', 'h1'], at: '120us' });
    await fabric.runFor(100_000);
    expect(fabric.now()).toBe(150_000);
    const done = await fabric.stop();
    // stop is idempotent
    expect(await fabric.stop()).toBe(done);
    const s = done.summary();
    expect(s.scenario).toBe('api-star');
    expect(s.virtualNs).toBe(150_000);
    expect(s.faults.map((f) => [f.action, f.t])).toEqual([
      ['link-down', 50_000],
      ['link-up', 120_000],
    ]);
    // three 10 µs liveness intervals after sw0 last heard h1 (exact: conservative mode), in whole ns
    expect(s.faults[0].detectionNs).toBe(21_051);
    expect(done.events().every((e) => Number.isInteger(e.t))).toBe(true);
    expect(done.flows().every((f) => Number.isInteger(f.fct) && Number.isInteger(f.start))).toBe(true);
    expect(s.processes).toMatchObject({ started: 5, leftRunning: 0 });
    expect(done.flows().length).toBe(s.flows.started);
    expect(done.events().some((e) => e.kind === 'port-down-detected' && e.node === 'sw0')).toBe(true);
    expect(existsSync(join(done.out, 'summary.json'))).toBe(true);
  });

  it('ends a list of flows without a duration when its flows are done, not 20 ms later', async () => {
    await using fabric = await Fabric.fromYaml(
      `name: api-list
topology: { kind: star, hosts: 3 }
workload: { pattern: list, flows: [{ src: h0, dst: h1, size: 30KB, start: 10us }] }
`,
    )
      .withOutput(tempOut('api'))
      .start();
    await fabric.run();
    const s = (await fabric.stop()).summary();
    expect(s.flows.completed).toBe(1);
    // the first 100 µs step after the flow's end (run.step), with the throughput over that time
    expect(s.virtualNs).toBe(100_000);
    expect(s.throughput.windowNs).toBe(100_000);
    expect(s.throughput.bytes).toBe(30_840); // 30 KB in 21 frames, 40 header bytes each
  });

  it('refuses faults in the past and unknown actions, naming the entry', async () => {
    await using fabric = await Fabric.fromYaml(STAR).withOutput(tempOut('api')).start();
    await fabric.runFor('20us');
    expect(() => fabric.inject({ action: 'kill', node: 'h0', at: '10us' })).toThrow(/in the past/);
    // a typo is a type error in TypeScript (FaultAction), and a plain message from JavaScript
    // @ts-expect-error 'explode' is no FaultAction
    expect(() => fabric.inject({ action: 'explode', node: 'h0' })).toThrow(
      /inject\(\): entry 0\.action: unknown action 'explode'/,
    );
    expect(() => fabric.inject({ action: 'kill', node: 'h9' })).toThrow(/entry 0\.node: no node named 'h9'/);
    // a rate where a time belongs, a negative time: the entry and field, like a scenario file's
    expect(() => fabric.inject({ action: 'kill', node: 'h0', at: '10Gbs' as '1us' })).toThrow(
      /^inject\(\): entry 0\.at: '10Gbs' looks like a rate; this field takes a duration/,
    );
    expect(() => fabric.inject({ action: 'kill', node: 'h0', at: -5 })).toThrow(
      /^inject\(\): entry 0\.at: must be >= 0/,
    );
    // a pause without its resume would leave the process stopped past the test
    expect(() => fabric.inject({ action: 'pause', node: 'h1' })).toThrow(
      /^inject\(\): entry 0\.action: pause of h1 needs its resume/,
    );
    await expect(fabric.runFor('-5us')).rejects.toThrow(ScenarioError);
    await expect(fabric.runFor('-5us')).rejects.toThrow(/^runFor\(\): duration: not a duration: '-5us'/);
    await expect(fabric.runFor(-5)).rejects.toThrow(/^runFor\(\): duration: must be a duration >= 0, got -5/);
    expect(() => Fabric.fromYaml(`${STAR}workload: 3\n`, { name: 'bad.yaml' })).toThrow(ScenarioError);
    // the live view's controls refuse a bad entry the same way, as an answer, not a crash
    const view = await fabric.liveView();
    expect(view.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{24}\/$/);
    const state = await (await fetch(`${view.url}state`)).json();
    expect(state).toMatchObject({ virtualNs: 20_000, held: null, sync: 'conservative', queues: [] });
    const bad = await fetch(`${view.url}inject`, {
      method: 'POST',
      body: JSON.stringify({ entry: { action: 'kill', node: 'h9' } }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/entry 0\.node: no node named 'h9'/);
    // without the token, nothing
    expect((await fetch(view.url.replace(/\/[0-9a-f]+\/$/, '/state'))).status).toBe(404);
    await view.close();
  });

  it('withNodePool runs the second fabric in the first one’s processes, with the same flows, and ends them', async () => {
    const runs = await withNodePool(async () => {
      const done = [];
      for (let i = 0; i < 2; i++) {
        await using fabric = await Fabric.fromYaml(STAR).withOutput(tempOut('api')).start();
        await fabric.run();
        done.push(await fabric.stop());
        // between the runs the pool's processes wait for the next
        expect((await ownNodePids()).length).toBe(5);
      }
      return done;
    });
    expect(runs.map((r) => r.summary().processes)).toMatchObject([
      { started: 5, reused: 0, leftRunning: 0 },
      { started: 5, reused: 5, leftRunning: 0 },
    ]);
    expect(runs[1].flows()).toEqual(runs[0].flows());
    expect(runs[0].flows().length).toBeGreaterThan(0);
    expect(await ownNodePids()).toEqual([]);
  });

  it('await using stops every node when the test throws', async () => {
    const body = async () => {
      await using fabric = await Fabric.fromYaml(STAR).withOutput(tempOut('api')).start();
      await fabric.runFor('10us');
      expect((await ownNodePids()).length).toBe(5);
      throw new Error('the user test failed');
    };
    await expect(body()).rejects.toThrow('the user test failed');
    expect(await ownNodePids()).toEqual([]);
  });

  it('the user-test example passes against the package, imported by name', async () => {
    // a user installs the package; here the example's node_modules/dcemu points at this repository
    const modules = join(ROOT, 'examples/user-test/node_modules');
    mkdirSync(modules, { recursive: true });
    if (!existsSync(join(modules, 'dcemu'))) symlinkSync('../../..', join(modules, 'dcemu'));
    const r = await execa(
      process.execPath,
      [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--root', 'examples/user-test'],
      { cwd: ROOT, reject: false, all: true },
    );
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('1 passed');
    // and it typechecks against the package's declarations: summary().f10 is the F10 section's type
    const tsc = await execa(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'examples/user-test'],
      { cwd: ROOT, reject: false, all: true },
    );
    expect(tsc.exitCode, tsc.all).toBe(0);
  });
});
