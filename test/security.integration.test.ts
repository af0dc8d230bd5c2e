/**
 * A run admits only its own nodes (docs/security.md), tried as a hostile local user would: during the
 * start-up a stranger connects to the orchestrator's control port as every node in turn (a wrong key),
 * replays a hello recorded from an earlier connection, and says nothing; once the nodes run, it does so
 * again, once with a node's leaked key, and sends each node datagrams with the tag of the run beside it
 * (the header that run's own datagrams carry) and two others. Two runs of the same scenario go side by
 * side under that, and each gives its solo bytes, every attempt counted.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { createSocket } from 'node:dgram';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { datagramTag, nodeKey, proof } from '../core/auth.js';
import { Codec } from '../core/codec.js';
import { FrameType, makeFrame } from '../core/frame.js';
import { collect } from '../orchestrator/engine/collect.js';
import { Engine } from '../orchestrator/engine/engine.js';
import { writeResults } from '../orchestrator/engine/results-files.js';
import { ProcessRuntime } from '../orchestrator/runtime/process.js';
import type { NodeLaunch, StartedRuntime } from '../orchestrator/runtime/types.js';
import { loadScenarioFile } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';
import { ROOT, tempOut } from './helpers.js';

const control = new Packr({ useRecords: false });

/** One raw control connection: what it heard, in order, until the other side closed it. */
async function speak(
  host: string,
  port: number,
  act: (challenge: Buffer) => Buffer | null,
): Promise<string[]> {
  const socket = connect({ host, port });
  socket.on('error', () => {});
  const heard: string[] = [];
  let buf = Buffer.alloc(0);
  await new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      let values: Array<{ type: string; nonce?: Buffer }>;
      try {
        values = control.unpackMultiple(buf) as typeof values;
      } catch {
        return;
      }
      buf = Buffer.alloc(0);
      for (const v of values) {
        heard.push(v.type);
        if (v.type === 'challenge') {
          const said = act(Buffer.from(v.nonce!));
          if (said) socket.write(said);
          else socket.destroy();
        }
      }
    });
    socket.once('close', () => resolve());
  });
  return heard;
}

/**
 * The process runtime, with a stranger at the control port before the nodes start: it speaks as
 * every planned node with another key, replays a hello recorded on an earlier connection (valid for
 * that connection's challenge only) and opens one connection that says nothing.
 */
class HostileStart extends ProcessRuntime {
  attempts: string[][] = [];
  /** the control address, as the stranger found it */
  control: [string, number] = ['', 0];
  names: string[] = [];
  /** h0's key, as if it had leaked: good for a proof, but h0 is connected already */
  leaked: Buffer = Buffer.alloc(0);
  /** what must not be in the results: the run's secret and its nodes' keys (the test can see them) */
  secrets: string[] = [];

  override async start(launches: NodeLaunch[]): Promise<StartedRuntime> {
    this.secrets = [launches[0].secret, ...launches.map((l) => nodeKey(l.secret, l.name))].map((b) =>
      b.toString('hex'),
    );
    const [host, port] = launches[0].env.DCEMU_CONTROL.split(':');
    const at = Number(port);
    this.control = [host, at];
    this.names = launches.map((l) => l.name);
    this.leaked = nodeKey(launches[0].secret, 'h0');
    const wrong = Buffer.alloc(32, 1);
    for (const l of launches)
      this.attempts.push(
        await speak(host, at, (c) =>
          control.pack({ type: 'hello', name: l.name, pid: 4242, proof: proof(wrong, c, l.name), nonce: c }),
        ),
      );
    // a hello as the real h0 would answer one challenge (the stranger saw it go by) ...
    let recorded: Buffer | null = null;
    const key = nodeKey(launches[0].secret, 'h0');
    this.attempts.push(
      await speak(host, at, (c) => {
        recorded = control.pack({ type: 'hello', name: 'h0', pid: 1, proof: proof(key, c, 'h0'), nonce: c });
        return null;
      }),
    );
    // ... replayed on a connection of its own: another challenge, so it fails
    this.attempts.push(await speak(host, at, () => recorded));
    return super.start(launches);
  }
}

/** UDP ports bound by the processes whose command line names `runId` (as `ss -lunp` would show). */
function udpPortsOfRun(runId: string): number[] {
  const inodes = new Set<string>();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmd.includes(runId)) continue;
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
  }
  const ports: number[] = [];
  for (const line of readFileSync('/proc/net/udp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length > 9 && inodes.has(f[9])) ports.push(Number.parseInt(f[1].split(':')[1], 16));
  }
  return ports;
}

const FILES = ['flows.csv', 'queues.csv', 'events.jsonl'];

/** Runs small.yaml (runtime `hostile` or the plain process runtime); `during`: after the start. */
async function run(
  name: string,
  runtime: ProcessRuntime,
  during: (runId: string) => Promise<number> = async () => 0,
) {
  const scenario = resolveScenario(
    loadScenarioFile(join(ROOT, 'test/fixtures/small.yaml'), ['run.plots=false']),
  );
  const out = tempOut(`security-${name}`);
  const started = await new Engine(scenario, { runtime, out }).start();
  const sent = await during(started.runId);
  await started.run();
  const result = await started.stop();
  const c = collect(result, 'process');
  await writeResults(out, result, c.summary, c.flows, c.outcomes);
  return { out, summary: c.summary, sent, bytes: FILES.map((f) => readFileSync(join(out, f), 'utf8')) };
}

/** The process runtime, keeping the run's secret for the test (to tag datagrams as that run's). */
class Recorder extends ProcessRuntime {
  private got: (secret: Buffer) => void = () => {};
  readonly secret = new Promise<Buffer>((r) => (this.got = r));

  override async start(launches: NodeLaunch[]): Promise<StartedRuntime> {
    this.got(launches[0].secret);
    return super.start(launches);
  }
}

/**
 * Once the nodes run: the stranger speaks as each of them again (a wrong key), and once with h0's
 * leaked key; then it sends every node datagrams tagged as another run's (`other`'s, the run beside it,
 * whose datagrams carry that very header).
 */
function inTraffic(hostile: HostileStart, other: Recorder) {
  return async (runId: string): Promise<number> => {
    const [host, port] = hostile.control;
    for (const name of hostile.names)
      hostile.attempts.push(
        await speak(host, port, (c) =>
          control.pack({
            type: 'hello',
            name,
            pid: 4242,
            proof: proof(Buffer.alloc(32, 2), c, name),
            nonce: c,
          }),
        ),
      );
    hostile.attempts.push(
      await speak(host, port, (c) =>
        control.pack({
          type: 'hello',
          name: 'h0',
          pid: 4242,
          proof: proof(hostile.leaked, c, 'h0'),
          nonce: c,
        }),
      ),
    );
    return foreignDatagrams(runId, datagramTag(await other.secret));
  };
}

/** Sends every node of the run datagrams tagged as another run's, from a socket of its own. */
async function foreignDatagrams(runId: string, otherRun: number): Promise<number> {
  const ports = udpPortsOfRun(runId);
  expect(ports.length).toBe(8);
  const codec = new Codec();
  const socket = createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', () => r()));
  let sent = 0;
  for (const port of ports)
    for (const tag of [0, otherRun, 0xfffffffe]) {
      const frame = makeFrame({ t: FrameType.Data, s: 0, d: 1, z: 1500 });
      const buf = codec.encode({ tag, port: 0, seq: 1, ack: 0, promise: 1e15 }, [frame]);
      await new Promise<void>((r) => socket.send(buf, port, '127.0.0.1', () => r()));
      sent++;
    }
  socket.close();
  return sent;
}

describe('a run admits only its own nodes', () => {
  it('strangers on the control port and datagrams of another run are refused, counted, and change nothing', async () => {
    const solo = await run('solo', new ProcessRuntime());
    expect(solo.summary.security).toEqual({
      refusedControl: 0,
      refused: [],
      foreignDatagrams: 0,
      forgedDatagrams: 0,
    });
    expect(solo.summary.flows.completed).toBeGreaterThan(0);

    const hostile = new HostileStart();
    const beside = new Recorder();
    const [a, b] = await Promise.all([run('a', hostile, inTraffic(hostile, beside)), run('b', beside)]);
    // every stranger heard a challenge and a refusal, nothing else (no configuration); the one with
    // h0's leaked key was welcomed as a proven h0, then turned away: h0 is connected
    expect(hostile.attempts).toHaveLength(19);
    for (const [i, heard] of hostile.attempts.entries())
      expect(heard, `attempt ${i}`).toEqual(
        i === 8 ? ['challenge'] : i === 18 ? ['challenge', 'welcome', 'refused'] : ['challenge', 'refused'],
      );
    // each refused and counted, with its peer address and the node it named
    const sec = a.summary.security;
    expect(sec.refusedControl).toBe(19);
    expect(sec.refused.map((r) => r.reason).sort()).toEqual(
      [
        'closed before its hello',
        "'h0' is already connected",
        ...Array(17).fill('its proof is wrong'),
      ].sort(),
    );
    expect(sec.refused[0]).toMatchObject({ name: 'h0', peer: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
    expect(sec.foreignDatagrams).toBe(a.sent);
    expect(a.sent).toBe(24);
    expect(b.summary.security.refusedControl).toBe(0);
    expect(b.summary.security.foreignDatagrams).toBe(0);
    // and both runs, side by side, give the solo run's bytes
    for (const [i, f] of FILES.entries()) {
      expect(a.bytes[i], `${f} of the attacked run`).toBe(solo.bytes[i]);
      expect(b.bytes[i], `${f} of the run beside it`).toBe(solo.bytes[i]);
    }
    // the secret is nowhere in what the runs wrote
    expect(hostile.secrets).toHaveLength(9);
    expect(filesHolding(a.out, hostile.secrets)).toEqual([]);
  }, 120_000);
});

/** files under `dir` (logs included) holding any of `needles` */
function filesHolding(dir: string, needles: string[]): string[] {
  const hits: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    const text = readFileSync(p, 'latin1');
    if (needles.some((n) => text.includes(n))) hits.push(p);
  }
  return hits;
}
