/**
 * The cost of crossing machines: bench/fixtures/fattree4.yaml on a two-machine swarm, its
 * four pods split two and two (only the links to the core switches cross), against the same swarm
 * with every node on one machine and against processes. Machines: the swarm lab's
 * (`dcemu swarm lab up`, made here as root when none is up, and removed after).
 *
 * The model (docs/containers.md): in conservative mode a node advances by one lookahead per step, and
 * a step waits for its peers' promises; a link between machines adds its extra one-way latency to every
 * step whose critical path crosses it. So the extra wall is about steps x (one-way latency across
 * machines - one-way latency within one), measured here with a UDP ping between containers on the
 * run's kind of network (an attachable overlay inside 198.18.0.0/15), on one machine and across two.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { holds, type NodeCounters } from '../orchestrator/engine/holds.js';
import { docker, RUN_LABEL } from '../orchestrator/runtime/docker-client.js';
import { createFabricNetwork } from '../orchestrator/runtime/docker-network.js';
import { labDaemons } from '../orchestrator/runtime/swarm-lab-state.js';
import { cli, type Figures, report, runScenario, swarmState } from './run.js';

type Figure = (name: string, value: number, note: string) => void;
type Run = Awaited<ReturnType<typeof runScenario>>;

const FIXTURE = 'bench/fixtures/fattree4.yaml';
const FILES = ['flows.csv', 'queues.csv', 'events.jsonl'];
const PINGS = 2000;

// the walls of the runs themselves (summary.json's wallMs: traffic to the end), not their start-up
// and teardown, which a swarm spends mostly in its daemons
const wall = (r: Run) => r.summary.wallMs / 1000;

export async function benchSwarm2(figure: Figure): Promise<void> {
  const state = await swarmState();
  if (state === null) {
    process.stdout.write('swarm2_identical n/a: no Docker daemon answers\n');
    return;
  }
  let far = Object.entries(labDaemons());
  const ours = far.length === 0;
  if (ours) {
    if (process.getuid?.() !== 0 || state === 'active') {
      process.stdout.write(
        'swarm2_identical n/a: no swarm lab, and this bench makes one only as root on a daemon outside any swarm\n',
      );
      return;
    }
    const up = await cli(['swarm', 'lab', 'up']);
    if (up.exitCode !== 0) throw new Error(`dcemu swarm lab up: ${up.stderr}`);
    far = Object.entries(labDaemons());
  }
  try {
    const image = await cli(['image', 'build']);
    if (image.exitCode !== 0) throw new Error(`dcemu image build: ${image.stderr}`);
    const [farName, farUrl] = far[0];
    const p = await runScenario(FIXTURE, []);
    const two = await runScenario(FIXTURE, ['--runtime', 'swarm']);
    const one = await runScenario(FIXTURE, ['--runtime', 'swarm', '--place', onOneMachine(two)]);
    const same = FILES.every((f) => {
      const bytes = readFileSync(join(p.out, f), 'utf8');
      return [two, one].every((r) => readFileSync(join(r.out, f), 'utf8') === bytes);
    });
    const machines: Record<string, string> = two.summary.processes.machines ?? {};
    const split = Object.values(machines).filter((m) => m === farName).length;
    const cross = crossLinks(two.out, machines);
    figure(
      'swarm2_identical',
      same ? 1 : 0,
      `k=4 FatTree (${two.summary.processes.started} nodes): on two machines (${split} on ${farName}, ${cross} links between them), on one, and as processes: the same bytes (1) or not (0)`,
    );
    figure(
      'swarm2_wall_s',
      wall(two),
      'k=4 FatTree on a two-machine swarm, the run without its start-up and teardown',
    );
    figure(
      'swarm2_vs_process_wall',
      wall(two) / wall(p),
      `two-machine swarm wall / process wall (${wall(p).toFixed(1)} s)`,
    );
    figure(
      'swarm2_vs_swarm1_wall',
      wall(two) / wall(one),
      `two-machine swarm wall / the same swarm with every node on one machine (${wall(one).toFixed(1)} s)`,
    );
    // this build's image (`dcemu image build` prints it last), on both machines since the runs
    await crossingFigures(figure, farUrl, image.stdout.trim().split('\n').pop() ?? '', two, one);
  } finally {
    if (ours) await cli(['swarm', 'lab', 'down']);
  }
}

/**
 * The latency of crossing machines (`image` on both), what the model makes of it, and the extra wall
 * measured: `two` on two machines against `one`, the same run on one.
 */
async function crossingFigures(figure: Figure, farUrl: string, image: string, two: Run, one: Run) {
  const rtt = await overlayRtt(farUrl, image);
  const steps = maxSteps(two.out);
  figure(
    'swarm2_rtt_local_us',
    rtt.local,
    `median UDP round trip between two containers on one machine, µs (${PINGS} pings)`,
  );
  figure(
    'swarm2_rtt_cross_us',
    rtt.cross,
    `median UDP round trip between containers on the two machines, µs (${PINGS} pings)`,
  );
  figure(
    'swarm2_model_extra_s',
    (steps * Math.max(0, rtt.cross - rtt.local)) / 2 / 1e6,
    `the model's extra wall for crossing: ${steps} steps x (cross - local one-way latency)`,
  );
  figure(
    'swarm2_measured_extra_s',
    wall(two) - wall(one),
    'two-machine wall - one-machine wall (same swarm, same run)',
  );
}

/** `--place` pinning one node of each group to the manager: every node on one machine. */
function onOneMachine(run: Run): string {
  const machines: Record<string, string> = run.summary.processes.machines ?? {};
  const here = Object.values(machines).find((m) => !Object.keys(labDaemons()).includes(m));
  if (!here) throw new Error('no node ran on the manager');
  return Object.keys(machines)
    .map((n) => `${n}=${here}`)
    .join(',');
}

/** Links between nodes on different machines, from the run's topology. */
function crossLinks(out: string, machines: Record<string, string>): number {
  const topo = JSON.parse(readFileSync(join(out, 'topology.json'), 'utf8')) as {
    nodes: Array<{ name: string; ports: Array<{ peer: string }> }>;
  };
  let n = 0;
  for (const node of topo.nodes)
    for (const p of node.ports) if (node.name < p.peer && machines[node.name] !== machines[p.peer]) n++;
  return n;
}

/** The most synchronization steps any node took (nodes.json's counters, as `dcemu holds` reads them). */
function maxSteps(out: string): number {
  const nodes = JSON.parse(readFileSync(join(out, 'nodes.json'), 'utf8')) as NodeCounters[];
  return Math.max(...holds(nodes).nodes.map((n) => n.steps));
}

const ECHO = `const s=require('node:dgram').createSocket('udp4');s.on('message',(m,r)=>s.send(m,r.port,r.address));s.bind(9000);`;
// a ping unanswered in 300 ms (the echo not yet bound) is sent again, under a new number
const PING = `const s=require('node:dgram').createSocket('udp4');const to=process.argv[1],n=Number(process.argv[2]);const t=[];let t0=0;
let k=0;const go=()=>{const me=++k;t0=process.hrtime.bigint();s.send(String(me),9000,to);setTimeout(()=>{if(k===me)go()},300)};
s.on('message',(m)=>{if(Number(m)!==k)return;t.push(Number(process.hrtime.bigint()-t0)/1e3);
if(t.length<n)go();else{t.sort((a,b)=>a-b);console.log(t[t.length>>1].toFixed(1));process.exit(0)}});s.bind(()=>go());`;

/**
 * Median UDP round trips on an attachable overlay of the swarm, between an echo container on this
 * machine and a pinger here (local) and on the far machine (cross). The network and containers carry
 * the run label, so `dcemu clean` finds anything a killed bench leaves.
 */
async function overlayRtt(farUrl: string, image: string): Promise<{ local: number; cross: number }> {
  const d = await docker();
  const name = `dcemu-bench-rtt-${process.pid}`;
  const net = await createFabricNetwork(d, name, ['echo', 'local', 'cross'], { overlay: true });
  const runArgs = (ip: string) => [
    'run',
    '--rm',
    '--network',
    name,
    '--ip',
    ip,
    '--label',
    `${RUN_LABEL}=${name}`,
  ];
  const echo = execa('docker', [...runArgs(net.address(0)), '--name', `${name}-echo`, image, '-e', ECHO], {
    reject: false,
  });
  try {
    const ping = async (host: string[], ip: string) => {
      const r = await execa('docker', [
        ...host,
        ...runArgs(ip),
        image,
        '-e',
        PING,
        net.address(0),
        String(PINGS),
      ]);
      return Number(r.stdout.trim());
    };
    // a first ping warms both paths (ARP, the overlay's peer tables)
    await ping([], net.address(1));
    const local = await ping([], net.address(1));
    const cross = await ping(['-H', farUrl], net.address(2));
    return { local, cross };
  } finally {
    await execa('docker', ['rm', '-f', `${name}-echo`], { reject: false });
    await echo;
    await execa('docker', ['network', 'rm', name], { reject: false });
  }
}

// alone: `node dist/bench/swarm2.js [--out dir]` (what docs/containers.md's table runs)
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const figures: Figures = [];
  await benchSwarm2((name, value, note) => figures.push([name, value, note]));
  report(figures);
}
