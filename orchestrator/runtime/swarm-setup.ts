/**
 * `dcemu swarm init | join | leave`: a Docker Swarm whose own networks stay inside 198.18.0.0/15.
 * Left to itself, `docker swarm init` puts `docker_gwbridge` (every task's way to its own machine) on
 * 172.x and the `ingress` overlay on 10.0.0.0/24; dcemu keeps its traffic in the benchmarking range,
 * so each machine's `docker_gwbridge` is created first, on a free /24 from the top of the range (as
 * Docker's docs say to customize it), and the swarm's default address pool (where `ingress` lands) is
 * another such /24. Runs give their overlays explicit subnets from the bottom of the range.
 */
import { RuntimeError } from '../engine/errors.js';
import { inAllowedRange } from './addresses.js';
import { type Docker, docker } from './docker-client.js';
import { freeTopSubnet, overlaps } from './docker-network.js';
import { GWBRIDGE, gwbridge } from './swarm.js';
import { removeSwarmRuns } from './swarm-removal.js';

/** the label on a `docker_gwbridge` that dcemu created (and so removes on `leave`) */
const SETUP_LABEL = 'dcemu.swarm';
const SWARM_PORT = 2377;

interface SwarmInfo {
  Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean; NodeID?: string };
}

async function swarmState(d: Docker): Promise<SwarmInfo['Swarm']> {
  return ((await d.info()) as SwarmInfo).Swarm;
}

/**
 * This machine's `docker_gwbridge`, created inside the range when missing, on a /24 that none of
 * `avoid` (the swarm's other networks) overlaps; its subnet.
 */
async function ensureGwbridge(d: Docker, say: (s: string) => void, avoid: string[] = []): Promise<string> {
  const existing = await gwbridge(d);
  if (existing) {
    if (!inAllowedRange(existing.subnet))
      throw new RuntimeError(
        `${GWBRIDGE} exists on ${existing.subnet}, outside 198.18.0.0/15: leave any swarm, remove it ('docker network rm ${GWBRIDGE}', no container may use it) and run this again`,
      );
    const clash = avoid.find((a) => overlaps(a, existing.subnet));
    if (clash)
      throw new RuntimeError(
        `${GWBRIDGE} exists on ${existing.subnet}, which the swarm uses already (${clash}): leave any swarm, remove it ('docker network rm ${GWBRIDGE}', no container may use it) and run this again`,
      );
    return existing.subnet;
  }
  const subnet = await freeTopSubnet(d, avoid);
  await d.createNetwork({
    Name: GWBRIDGE,
    Driver: 'bridge',
    IPAM: { Driver: 'default', Config: [{ Subnet: subnet }] },
    Options: {
      'com.docker.network.bridge.name': GWBRIDGE,
      'com.docker.network.bridge.enable_icc': 'false',
      'com.docker.network.bridge.enable_ip_masquerade': 'true',
    },
    Labels: { [SETUP_LABEL]: '1' },
  });
  say(`${GWBRIDGE}: ${subnet}`);
  return subnet;
}

/**
 * Makes this machine a swarm manager. `advertiseAddr` is its address on the network the machines
 * share; alone, 127.0.0.1 (no other machine can join then). Returns the worker join token.
 */
export async function swarmInit(opts: {
  advertiseAddr?: string;
  /** subnets no network of the swarm may take (the machines' shared network, say) */
  avoid?: string[];
  say: (s: string) => void;
  /** the daemon to act on; default this machine's */
  client?: Docker;
}): Promise<string> {
  const d = opts.client ?? (await docker());
  const avoid = opts.avoid ?? [];
  const state = await swarmState(d);
  if (state?.LocalNodeState === 'active') {
    await ensureGwbridge(d, opts.say);
    opts.say(
      `this machine is in a swarm already (${state.ControlAvailable ? 'manager' : 'worker'}); nothing changed`,
    );
    return state.ControlAvailable ? (await d.swarmInspect()).JoinTokens.Worker : '';
  }
  const gw = await ensureGwbridge(d, opts.say, avoid);
  const pool = await freeTopSubnet(d, [...avoid, gw]);
  const addr = opts.advertiseAddr ?? '127.0.0.1';
  await d.swarmInit({
    ListenAddr: `${addr}:${SWARM_PORT}`,
    AdvertiseAddr: addr,
    DefaultAddrPool: [pool],
    SubnetSize: 24,
  });
  opts.say(
    `swarm initialized: this machine is its manager at ${addr}:${SWARM_PORT}; its own networks on ${pool}`,
  );
  return (await d.swarmInspect()).JoinTokens.Worker;
}

/**
 * Joins this machine to a swarm as a worker: its `docker_gwbridge` first, on a subnet none of `avoid`
 * overlaps (the swarm's pool and the other machines' bridges, which `dcemu swarm init` prints in the
 * join command); then checks that the swarm's own network (`ingress`, from the pool) is clear of it.
 */
export async function swarmJoin(opts: {
  manager: string;
  token: string;
  advertiseAddr?: string;
  avoid?: string[];
  say: (s: string) => void;
  /** the daemon to act on; default this machine's */
  client?: Docker;
}): Promise<void> {
  const d = opts.client ?? (await docker());
  if ((await swarmState(d))?.LocalNodeState === 'active')
    throw new RuntimeError("this machine is in a swarm already: 'dcemu swarm leave' first");
  const gw = await ensureGwbridge(d, opts.say, opts.avoid);
  const manager = opts.manager.includes(':') ? opts.manager : `${opts.manager}:${SWARM_PORT}`;
  await d.swarmJoin({
    RemoteAddrs: [manager],
    JoinToken: opts.token,
    ListenAddr: `0.0.0.0:${SWARM_PORT}`,
    ...(opts.advertiseAddr && { AdvertiseAddr: opts.advertiseAddr }),
  });
  opts.say(`joined the swarm of ${manager} as a worker`);
  const { pool } = await swarmSubnets(d);
  if (pool && overlaps(pool, gw))
    opts.say(
      `warning: ${GWBRIDGE} (${gw}) overlaps the swarm's own network (${pool}): pass the subnets 'dcemu swarm init' printed to --avoid (docs/containers.md)`,
    );
}

/**
 * This machine's `docker_gwbridge` subnet and the swarm's own network's (`ingress`, carved from the
 * swarm's address pool; every machine of a swarm sees it).
 */
export async function swarmSubnets(d: Docker): Promise<{ gwbridge?: string; pool?: string }> {
  const gw = await gwbridge(d);
  const ingress = (await d
    .getNetwork('ingress')
    .inspect()
    .catch(() => null)) as { IPAM?: { Config?: Array<{ Subnet?: string }> } } | null;
  return {
    ...(gw && { gwbridge: gw.subnet }),
    ...(ingress?.IPAM?.Config?.[0]?.Subnet && { pool: ingress.IPAM.Config[0].Subnet }),
  };
}

/**
 * Removes every swarm run (its services, containers and overlay; not the docker runtime's or
 * compose's runs on the same daemon), leaves the swarm (forced: a last manager may leave) and removes
 * the `docker_gwbridge` dcemu created (or says why it stays: a daemon bug). Returns what the daemon
 * keeps of the swarm's runs.
 */
export async function swarmLeave(
  say: (s: string) => void,
  client?: Docker,
  /**
   * a lab machine's daemon and namespace are removed right after: few tries at removing the bridge
   * (250 ms apart), and its fate told as theirs; a machine kept running gets 41 tries (10 s)
   */
  { lab = false }: { lab?: boolean } = {},
): Promise<string[]> {
  const tries = lab ? 4 : 41;
  const d = client ?? (await docker());
  const state = await swarmState(d);
  let kept: string[] = [];
  if (state?.LocalNodeState === 'active') {
    if (state.ControlAvailable) kept = await removeSwarmRuns();
    await d.swarmLeave({ force: true });
    say('left the swarm');
  } else say('this machine is in no swarm');
  if ((await gwbridge(d))?.labels[SETUP_LABEL]) {
    for (let i = 0; ; i++) {
      try {
        // an endpoint the daemon still lists on the bridge after leaving (the ingress sandbox's,
        // `gateway_ingress-sbox`) goes by a forced disconnect: without it the bridge was kept once in
        // two fresh-clone CI runs ("has active endpoints" after every retry)
        const now = (await d.getNetwork(GWBRIDGE).inspect()) as {
          Containers?: Record<string, { Name?: string }>;
        };
        for (const [id, c] of Object.entries(now.Containers ?? {}))
          await d
            .getNetwork(GWBRIDGE)
            .disconnect({ Container: c.Name ?? id, Force: true })
            .catch(() => {});
        await d.getNetwork(GWBRIDGE).remove();
        say(`${GWBRIDGE} removed`);
        break;
      } catch (err) {
        // gone between two tries (a remove the daemon finished after answering with an error, or
        // its own cleanup): what this loop wanted, not a bridge kept
        if ((err as { statusCode?: number }).statusCode === 404) {
          say(`${GWBRIDGE} removed`);
          break;
        }
        if (i >= tries - 1) {
          // the daemon's own bug (moby/moby#37018): an endpoint `network inspect` does not show holds
          // the bridge until the daemon restarts. The swarm is left, and the idle bridge (inside the
          // range, no container on it) is what the next `dcemu swarm init` reuses: said, not failed.
          say(
            `${GWBRIDGE} kept: the Docker daemon holds an endpoint on it that it does not list (${(err as Error).message.split('\n')[0].trim()}); ${lab ? 'it goes with this lab machine, removed next' : "'dcemu swarm init' reuses it, and a daemon restart removes it"}`,
          );
          break;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }
  return kept;
}
