/**
 * A compose file from a scenario (docs/containers.md): the same topology the runtimes instantiate, run by
 * `docker-compose` instead — one service per node plus one `orchestrator` service running
 * `dcemu run --runtime attached`, on one internal network whose addresses are fixed in the file
 * (orchestrator/runtime/addresses.ts). Format 2.4, the newest that docker-compose 1.29 reads with `ipv4_address`
 * and `ipam` (3.x drops neither but is meant for Swarm, which ignores both).
 *
 * The scenario reaches the orchestrator inside the file itself: its YAML text is the orchestrator's
 * `DCEMU_SCENARIO` environment variable (`$` doubled, compose's escape), which `dcemu run
 * --scenario-env DCEMU_SCENARIO` reads instead of a file; `--set` overrides and the tdf travel on
 * its command line. So the compose file is the only file a user needs; results land in a host
 * folder bind-mounted at /results into every service (node logs go to /results/logs).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, isAbsolute, posix } from 'node:path';
import { Document } from 'yaml';
import { SECRET_FILE_ENV } from '../../core/auth.js';
import { nodeEnv, nodeOptions } from '../../core/paths.js';
import { RuntimeError, ScenarioError } from '../engine/errors.js';
import { userSchemeDir } from '../registry/index.js';
import { allocateAddresses, CONTROL_PORT, pickSubnet } from '../runtime/addresses.js';
import { NODE_PROCESS_FAULTS } from '../runtime/attached.js';
import { containerUser, HARDENED_HOST, SECRET_IN_CONTAINER } from '../runtime/hardening.js';
import { APP_DIR, imageEntry } from '../runtime/image.js';
import { parseScenario } from '../scenario/load.js';
import { resolveScenario, type Scenario } from '../scenario/resolve.js';

/** the environment variable that carries the scenario text to the orchestrator service */
export const SCENARIO_ENV = 'DCEMU_SCENARIO';
/** where the results folder is mounted in every service */
const RESULTS_IN_CONTAINER = '/results';
/** the orchestrator's teardown (reports, results folder) outlasts compose's default 10 s stop grace */
const ORCHESTRATOR_STOP_GRACE = '60s';
/** a node's report and exit after compose's SIGTERM, real s, beside its exit delay (compose's default) */
const NODE_STOP_GRACE_S = 10;
/** how far apart the nodes' processes end, real ms (a container's exit is ~20 ms of the daemon's work here) */
const EXIT_DELAY_MS = 200;
/** compose project names: lowercase letters, digits, '-' and '_' (docker-compose 1.29) */
const PROJECT_NAME = /^[a-z0-9][a-z0-9_-]*$/;
const SERVICE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

export interface ComposeOptions {
  /** the scenario file, read and sent as text */
  scenarioFile: string;
  /** `--set key=value` overrides, applied here to check them and passed on to the orchestrator */
  overrides?: string[];
  tdf?: number;
  /** the dcemu image tag every service runs */
  image: string;
  /** absolute host folder mounted at /results */
  results: string;
  /** labels every container and the network (`dcemu=<project>`); default dcemu-<name>-<hash> */
  project?: string;
  /** inside 198.18.0.0/15; default a block of 198.19.0.0/16 chosen by the project's hash */
  subnet?: string;
  /** `uid:gid` the services run as, so the results belong to the user; null: the image's (root) */
  user?: string | null;
}

export interface ComposeFile {
  /** the compose file, YAML */
  text: string;
  project: string;
  subnet: string;
  nodes: number;
  /** timeline entries left out: the attached runtime cannot kill, pause or resume a container */
  dropped: Array<{ action: string; node: string; at: string }>;
}

export function composeFile(opts: ComposeOptions): ComposeFile {
  if (!isAbsolute(opts.results))
    throw new RuntimeError(`results folder must be absolute, got '${opts.results}'`);
  let text: string;
  try {
    text = readFileSync(opts.scenarioFile, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new ScenarioError(opts.scenarioFile, 0, '', `cannot read scenario file (${code})`);
  }
  const overrides = [...(opts.overrides ?? [])];
  const src = parseScenario(text, opts.scenarioFile, overrides);
  // node faults need a runtime that owns the node's process: keep the rest of the timeline
  const raw: Array<Record<string, unknown>> = src.data.timeline ?? [];
  const kept = raw.filter((e) => !NODE_PROCESS_FAULTS.has(String(e.action)));
  const dropped = raw
    .filter((e) => NODE_PROCESS_FAULTS.has(String(e.action)))
    .map((e) => ({ action: String(e.action), node: String(e.node), at: String(e.at) }));
  if (dropped.length > 0) overrides.push(`timeline=${JSON.stringify(kept)}`);
  const scenario = resolveScenario(parseScenario(text, opts.scenarioFile, overrides), { tdf: opts.tdf });
  if (userSchemeDir(scenario.scheme.kind) !== undefined)
    throw new RuntimeError(
      `${opts.scenarioFile}: scheme ${scenario.scheme.kind} comes from a module of yours (scheme.module): it runs on the process and docker runtimes; compose's containers hold only dcemu's own schemes`,
    );
  const names = scenario.topology.nodes.map((n) => n.name);
  for (const n of names) {
    if (!SERVICE_NAME.test(n) || n === 'orchestrator')
      throw new RuntimeError(`node name '${n}' cannot be a compose service name`);
  }

  const project = opts.project ?? defaultProject(scenario.name, text, overrides, opts);
  if (!PROJECT_NAME.test(project))
    throw new RuntimeError(`project '${project}': use lowercase letters, digits, '-' and '_'`);
  const addr = allocateAddresses(names, opts.subnet ?? pickSubnet(names.length, project));
  const user = opts.user === undefined ? containerUser() : opts.user;
  // least privilege, as the docker runtime's containers (orchestrator/runtime/hardening.ts)
  const common = hardened(opts.image, user);
  const results = `${composeEscape(opts.results)}:${RESULTS_IN_CONTAINER}`;
  // the run's secret: the orchestrator draws one each time it starts and writes it into a tmpfs volume
  // that only this project's containers mount (fresh on every `up`); no secret is in this file
  const secretDir = posix.dirname(SECRET_IN_CONTAINER);

  const ctx: ServiceContext = { common, results, secretDir, addr, project };
  const services: Record<string, unknown> = {
    orchestrator: orchestratorService(opts, scenario, overrides, text, ctx),
  };
  // each node starts after the one before it (the first after the orchestrator), and they end one at a
  // time, EXIT_DELAY_MS apart in the same order, however compose stops them: Docker 20.10 counts a
  // network's endpoints with a read-modify-write that concurrent starts or exits can leave above the
  // truth, and such a network is kept after `down` ("has active endpoints" with no container left,
  // until the daemon restarts; docs/containers.md, Cleanup)
  const nodes = scenario.topology.nodes;
  for (const [i, node] of nodes.entries()) {
    services[node.name] = nodeService(node, i, nodes, ctx);
  }

  const doc = composeDocument(services, project, user, addr.subnet);
  doc.commentBefore = fileComment(opts, scenario, names.length, addr.subnet, project, dropped);
  return {
    text: doc.toString({ lineWidth: 0, directives: false }),
    project,
    subnet: addr.subnet,
    nodes: names.length,
    dropped,
  };
}

/** The file's document: the services, the secret's tmpfs volume and the fabric's internal network. */
function composeDocument(
  services: Record<string, unknown>,
  project: string,
  user: string | null,
  subnet: string,
): Document {
  // YAML 1.1 rules, as docker-compose's PyYAML reads them: `0:0` must be quoted there (base 60)
  return new Document(
    {
      version: '2.4',
      services,
      volumes: {
        secret: {
          driver: 'local',
          driver_opts: { type: 'tmpfs', device: 'tmpfs', o: secretVolumeOptions(user) },
          labels: { dcemu: project },
        },
      },
      networks: {
        fabric: {
          driver: 'bridge',
          // the fabric talks only to itself: no route out of 198.18.0.0/15
          internal: true,
          labels: { dcemu: project },
          ipam: { config: [{ subnet }] },
        },
      },
    },
    { version: '1.1', aliasDuplicateObjects: false },
  );
}

/** The comment atop the file: what it runs, how to run and clean it, and what it left out of the timeline. */
function fileComment(
  opts: ComposeOptions,
  scenario: Scenario,
  nodes: number,
  subnet: string,
  project: string,
  dropped: ComposeFile['dropped'],
): string {
  const run = `docker-compose -p ${project} -f <this file>`;
  return [
    ` dcemu compose: '${scenario.name}' from ${opts.scenarioFile}, ${nodes} nodes + orchestrator, ${scenario.sync === 'dilated' ? `dilated, tdf ${scenario.tdf}` : 'conservative'}`,
    ` image ${opts.image}, subnet ${subnet}, results in ${opts.results}`,
    ` run:   ${run} up --abort-on-container-exit --exit-code-from orchestrator`,
    ` clean: ${run} down`,
    ...(dropped.length > 0
      ? [
          ` left out of the timeline (compose nodes are not the orchestrator's to kill, pause or resume):`,
          ` ${dropped.map((d) => `${d.action} ${d.node} at ${d.at}`).join(', ')}`,
        ]
      : []),
  ].join('\n');
}

/** What every service of the file shares: the image, and least privilege as the docker runtime's containers. */
function hardened(image: string, user: string | null) {
  return {
    image,
    ...(user ? { user } : {}),
    cap_drop: [...HARDENED_HOST.CapDrop],
    security_opt: [...HARDENED_HOST.SecurityOpt],
    read_only: true,
    tmpfs: Object.entries(HARDENED_HOST.Tmpfs).map(([path, o]) => `${path}:${o}`),
  };
}

/** The orchestrator's service: `dcemu run` on the attached runtime, the scenario's text in its environment. */
/** What every service of the file shares: its hardening, the results and secret volumes, the addresses and the project. */
interface ServiceContext {
  common: ReturnType<typeof hardened>;
  /** the results volume, `host:container` */
  results: string;
  /** the secret volume's folder in the containers */
  secretDir: string;
  addr: ReturnType<typeof allocateAddresses>;
  project: string;
}

function orchestratorService(
  opts: ComposeOptions,
  scenario: Scenario,
  overrides: string[],
  text: string,
  { common, results, secretDir, addr, project }: ServiceContext,
): Record<string, unknown> {
  return {
    ...common,
    command: [
      posix.join(APP_DIR, 'dist', 'orchestrator', 'cli.js'),
      'run',
      basename(opts.scenarioFile),
      '--scenario-env',
      SCENARIO_ENV,
      '--runtime',
      'attached',
      '--subnet',
      addr.subnet,
      '--secret-file',
      SECRET_IN_CONTAINER,
      '--out',
      RESULTS_IN_CONTAINER,
      // the scenario's time mode; a tdf only for dilated time
      ...(scenario.sync === 'dilated' ? ['--tdf', String(scenario.tdf)] : ['--sync', 'conservative']),
      ...overrides.flatMap((o) => ['--set', composeEscape(o)]),
    ],
    // compose interpolates ${VAR} in the file: '$$' is a literal '$'
    environment: { [SCENARIO_ENV]: composeEscape(text) },
    volumes: [results, `secret:${secretDir}`],
    networks: { fabric: { ipv4_address: addr.orchestrator } },
    labels: { dcemu: project, 'dcemu.role': 'orchestrator' },
    stop_grace_period: ORCHESTRATOR_STOP_GRACE,
  };
}

/** A node's service: hardened as the orchestrator's, started after the one before it, ending EXIT_DELAY_MS after it. */
function nodeService(
  node: Scenario['topology']['nodes'][number],
  i: number,
  nodes: Scenario['topology']['nodes'],
  { common, results, secretDir, addr, project }: ServiceContext,
): Record<string, unknown> {
  const exitDelayMs = i * EXIT_DELAY_MS;
  return {
    ...common,
    // the arguments only label the process, as under the process runtime
    command: [...nodeOptions(), imageEntry(node.role), '--dcemu-run', project, '--dcemu-node', node.name],
    environment: {
      ...nodeEnv(`${addr.orchestrator}:${CONTROL_PORT}`, node.name),
      [SECRET_FILE_ENV]: SECRET_IN_CONTAINER,
      ...(exitDelayMs > 0 ? { DCEMU_EXIT_DELAY_MS: String(exitDelayMs) } : {}),
    },
    // compose's grace before a SIGKILL (10 s by default) counts from its SIGTERM: the delay on top
    stop_grace_period: `${Math.ceil(exitDelayMs / 1000) + NODE_STOP_GRACE_S}s`,
    volumes: [results, `secret:${secretDir}:ro`],
    networks: { fabric: { ipv4_address: addr.nodes.get(node.name) } },
    // starts once the container before it runs; the node retries until the orchestrator listens (20 s)
    depends_on: [i === 0 ? 'orchestrator' : nodes[i - 1].name],
    labels: { dcemu: project, 'dcemu.node': node.name, 'dcemu.role': node.role },
  };
}

/** compose interpolates `${VAR}` everywhere in the file; `$$` is a literal `$` */
function composeEscape(s: string): string {
  return s.replaceAll('$', '$$$$');
}

/** dcemu-<name>-<8 hex>: the same inputs give the same file, different ones a different project. */
function defaultProject(name: string, text: string, overrides: string[], opts: ComposeOptions): string {
  const slug =
    name
      .toLowerCase()
      .replace(/[^a-z0-9_-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'fabric';
  const h = createHash('sha256')
    .update([text, ...overrides, String(opts.tdf ?? ''), opts.image, opts.results].join('\0'))
    .digest('hex');
  return `dcemu-${slug}-${h.slice(0, 8)}`;
}

/** the secret volume: a small tmpfs that only the containers' user can enter */
function secretVolumeOptions(user: string | null): string {
  const [uid, gid] = (user ?? '0:0').split(':');
  return `uid=${uid},gid=${gid ?? uid},mode=0700,size=64k`;
}
