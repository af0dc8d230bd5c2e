/**
 * The scenario file's JSON schema (docs/scenarios.md). Durations, rates and sizes are strings with units
 * (`10us`, `10Gbps`, `150KB`) or plain numbers (ns, bit/s, bytes); `resolve.ts` turns them into
 * numbers. Every object is closed (`additionalProperties: false`) so a typo is an error, not a
 * silently ignored key.
 */

import { schemeSchema } from '../registry/index.js';
import { chaosSchema, invariantsSchema } from './chaos-schema.js';
import { clocksSchema, jitterSchema, ptpSchema } from './clock-schema.js';
import { DEFAULTS } from './defaults.js';
import { eachLinkSchema, impairmentProperties } from './impairments.js';
import { distribution, doc, nodeName } from './schema-fragments.js';
import { bytes, duration, rate } from './units.js';
import { workloadSchema } from './workload-schema.js';

export const signedDuration = {
  type: ['string', 'number'],
  pattern: '^\\s*-?[0-9]*\\.?[0-9]+(e[-+]?\\d+)?\\s*(ns|us|µs|ms|s)?\\s*$',
};
const probability = { type: 'number', minimum: 0, maximum: 1 };

const link = (which: string) => {
  // (a class's rate is its line rate: a degraded port is one link's, in `each`)
  const { rate: _degraded, ...impair } = impairmentProperties(
    `one-way delay of every ${which} link, cable plus switch pipeline (ns: 1us, 500ns); a distribution varies it per frame, its least value the propagation delay`,
  );
  return {
    type: 'object',
    additionalProperties: false,
    description: `${which} links: their rate and delay, and their impairments (netem's set)`,
    properties: {
      rate: doc(rate, `line rate of every ${which} link (bit/s: 10Gbps, 100Mbps)`, DEFAULTS.link.rate),
      ...impair,
      delay: { ...impair.delay, default: DEFAULTS.link.delay },
    },
  };
};

const linkRef = {
  type: 'array',
  items: nodeName,
  minItems: 2,
  maxItems: 2,
  description: 'the two node names at the ends of the link, e.g. [leaf0, spine1]',
};

/** what `run.capture` takes: a node (all its links) or a link [a, b]; both directions either way */
const captureRef = {
  type: ['string', 'array'],
  minLength: 1,
  items: nodeName,
  minItems: 2,
  maxItems: 2,
  description:
    'a node name (every link of the node) or the two node names at the ends of a link, e.g. [leaf0, spine1]; both directions are captured',
};

/** `link-impair`'s fields: a delay on top of the link's own */
const TIMELINE_IMPAIR = impairmentProperties('extra one-way delay on top of the link’s own');

export const TIMELINE_ACTIONS = [
  'kill',
  'pause',
  'resume',
  'link-down',
  'link-up',
  'link-lossy',
  'link-impair',
  'link-flap',
  'node-impair',
  'partition',
  'heal',
  'ptp-loss',
  'clock-step',
  'clock-freq',
  'stop',
  'start',
  'disconnect',
  'connect',
] as const;

/** timeline actions on a node's container: only a container runtime (docker) can carry them out */
export const CONTAINER_ACTIONS: ReadonlySet<string> = new Set(['stop', 'start', 'disconnect', 'connect']);

/**
 * How the schema is compiled, here and by the build's precompiled validator (scripts/postbuild.mjs).
 * verbose: errors carry the offending data and their schema, for messages that list the allowed keys.
 */
export const AJV_OPTIONS = { allErrors: true, strict: false, verbose: true } as const;

const computeModel = {
  enum: ['none', 'cost', 'measured'],
  description: 'none: instantaneous; cost: modelled costs, reproducible; measured: real CPU time x scale',
} as const;
const computeScale = {
  type: 'number',
  exclusiveMinimum: 0,
  description: 'multiplies every cost: 2 models a core half as fast as the reference (default 1)',
} as const;
const computeRole = (role: string) =>
  ({
    type: 'object',
    additionalProperties: false,
    description: `the compute model of the ${role}s, over the section's own model and scale`,
    properties: { model: computeModel, scale: computeScale },
  }) as const;

const scenarioSchemaBody = {
  type: 'object',
  additionalProperties: false,
  required: ['topology', 'workload'],
  properties: {
    name: doc({ type: 'string' }, "the run's name in results and logs (default: the file's name)"),
    description: doc({ type: 'string' }, 'what the scenario is for, in words (kept in scenario.json)'),
    tdf: doc(
      { type: 'number', exclusiveMinimum: 0 },
      'dilated mode: real nanoseconds per virtual nanosecond (2000: 2 ms of wall time per virtual µs)',
      DEFAULTS.tdf,
    ),
    seed: doc(
      // past 2^53 an integer is not exact: two seeds written differently would be the same seed
      { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
      'seeds every random draw (workload, clocks, jitter, loss): the same seed gives the same run',
      DEFAULTS.seed,
    ),
    topology: {
      type: 'object',
      required: ['kind'],
      additionalProperties: false,
      description:
        'the fabric: its shape and size (hosts h0.., switches by tier); arbiters come from the scheme',
      properties: {
        kind: doc(
          { enum: ['leaf-spine', 'fat-tree', 'f10', 'dumbbell', 'star'] },
          'leaf-spine (leaves, spines, hostsPerLeaf), fat-tree (k), f10 (k, levels, variant), dumbbell (hostsPerSide), star (hosts)',
        ),
        leaves: doc({ type: 'integer', minimum: 1 }, 'leaf-spine: leaf (ToR) switches; required'),
        spines: doc(
          { type: 'integer', minimum: 1 },
          'leaf-spine: spine switches, each wired to every leaf; required',
        ),
        hostsPerLeaf: doc({ type: 'integer', minimum: 1 }, 'leaf-spine: hosts under each leaf; required'),
        k: doc(
          { type: 'integer', minimum: 2, multipleOf: 2 },
          'fat-tree and f10: switch radix k (k³/4 hosts, 5k²/4 switches in three levels); required',
        ),
        levels: doc({ type: 'integer', minimum: 2 }, 'f10: switch levels (L + 1)', 3),
        variant: doc(
          { enum: ['ab', 'standard'] },
          "f10: the AB FatTree's alternating wiring (ab) or a standard FatTree's (standard)",
          'ab',
        ),
        hostsPerSide: doc(
          { type: 'integer', minimum: 1 },
          'dumbbell: hosts on each side of the one bottleneck link; required',
        ),
        hosts: doc({ type: 'integer', minimum: 2 }, 'star: hosts around one switch; required'),
      },
    },
    links: {
      type: 'object',
      additionalProperties: false,
      description:
        'link rates, delays and impairments: host links (host to its switch), fabric links (switch to switch), and single links or directions (each)',
      properties: { host: link('host'), fabric: link('fabric'), each: eachLinkSchema },
    },
    ports: {
      type: 'object',
      additionalProperties: false,
      description: "every egress port's queue: its buffer, ECN marking and transmit pipeline",
      properties: {
        buffer: doc(
          bytes,
          "a switch port's buffer; a frame that does not fit is dropped (bytes: 400KB)",
          DEFAULTS.ports.buffer,
        ),
        ecnThreshold: doc(
          bytes,
          'a frame that leaves a queue longer than this is ECN-marked (DCTCP K; bytes: 30KB)',
          DEFAULTS.ports.ecnThreshold,
        ),
        commitAhead: doc(
          duration,
          "the transmit pipeline: a frame is committed to its link this long before it starts (ns: 2us); it is also every hop's lookahead",
          DEFAULTS.ports.commitAhead,
        ),
        hostBuffer: doc(
          bytes,
          "a host NIC's transmit queue; a transport that outruns it waits (bytes: 8MB)",
          DEFAULTS.ports.hostBuffer,
        ),
        hostEcnThreshold: doc(
          bytes,
          "a host NIC's ECN marking threshold, as a switch port's (DCTCP K at the NIC, where a sender's own link is its bottleneck); 0: the NIC marks nothing (bytes: 0B)",
          DEFAULTS.ports.hostEcnThreshold,
        ),
      },
    },
    host: {
      type: 'object',
      additionalProperties: false,
      description:
        "the host stack under the transport: what a flow may hand its NIC and the NIC's qdisc (docs/scenarios.md#host)",
      properties: {
        stack: doc(
          { enum: ['linux', 'unbounded'] },
          "linux: Linux's defaults (a 4 MiB send buffer, TCP small queues at 1 MiB, fq_codel, the window grows only while it limits); unbounded: none of them, a flow hands its NIC its whole window (dcemu before the stack was modelled)",
          DEFAULTS.host.stack,
        ),
        qdisc: doc(
          { enum: ['fq_codel', 'fq', 'pfifo_fast', 'prio'] },
          "the NIC's queueing discipline: Linux's fq_codel, fq (its round robin, without pacing) or pfifo_fast, or prio (8 strict-priority FIFOs); default: the stack's",
        ),
        sendBuffer: doc(
          bytes,
          "a flow's socket send buffer: payload sent and not acknowledged at most (tcp_wmem's largest; 0: no limit); default: the stack's",
        ),
        smallQueues: doc(
          bytes,
          "TCP small queues' cap on a flow's bytes in the qdisc and NIC (tcp_limit_output_bytes; 0: off); default: the stack's",
        ),
        cwndValidation: doc(
          { type: 'boolean' },
          "the window grows only while it limits what the flow sends (Linux's tcp_is_cwnd_limited); default: the stack's",
        ),
        stackDelay: doc(
          duration,
          "the kernel and NIC path each frame crosses, on each side: a frame the transport or a scheme's host part hands down reaches the NIC's queue this much later, and an arrived frame reaches them this much later (PTP frames excepted: their stamps are the NIC's). A latency, not a rate limit; e.g. 3us (docs/scenarios.md#host); default: 0, none",
          '0ns',
        ),
      },
    },
    liveness: {
      type: 'object',
      additionalProperties: false,
      description:
        'link failure detection: neighbours exchange keepalives and declare a port down after missing some',
      properties: {
        interval: doc(duration, 'keepalive period on every idle link (ns: 10us)', DEFAULTS.liveness.interval),
        multiplier: doc(
          { type: 'integer', minimum: 1 },
          'a port is declared down after this many intervals without hearing its peer',
          DEFAULTS.liveness.multiplier,
        ),
      },
    },
    routing: {
      type: 'object',
      additionalProperties: false,
      description:
        "route withdrawal on the baseline's up/down ECMP routing (schemes that bring their own routing, F10, ignore it): a switch that can no longer reach some hosts tells its neighbouring switches, which stop sending it their traffic, as a BGP-run Clos does (RFC 7938)",
      properties: {
        withdraw: doc(
          { type: 'boolean' },
          'withdraw and restore routes; false: a switch that lost its way to some hosts still takes their traffic and drops it (a black hole)',
          DEFAULTS.routing.withdraw,
        ),
        updateDelay: doc(
          duration,
          'a switch’s time to process a route update and install it, per hop (ns: 1ms)',
          DEFAULTS.routing.updateDelay,
        ),
      },
    },
    clocks: clocksSchema,
    /**
     * what computation costs in fabric time (docs/compute.md): a model for hosts and arbiters, with
     * per-role overrides; switches are hardware (their cost is the port model's)
     */
    compute: {
      type: 'object',
      additionalProperties: false,
      description:
        'What computation costs in fabric time (conservative mode). model: none (handlers are instantaneous), cost (schemes charge the bench-calibrated cost of their heavy operations), measured (each handler costs its own CPU time x scale; not reproducible). Applies to hosts and arbiters; host: and arbiter: override it per role.',
      properties: {
        model: computeModel,
        scale: computeScale,
        host: computeRole('host'),
        arbiter: computeRole('arbiter'),
      },
    },
    jitter: jitterSchema,
    ptp: ptpSchema,
    // the registered schemes' kinds and settings: scenarioSchema() puts them here
    scheme: {},
    transport: {
      type: 'object',
      additionalProperties: false,
      description:
        "the hosts' transport where the scheme brings none of its own: a reliable window-based one (baseline) or unreliable UDP",
      properties: {
        kind: doc(
          { enum: ['baseline', 'udp'] },
          'baseline: reliable, windowed, congestion-controlled (cc); udp: sends at a rate, never retransmits',
          'baseline',
        ),
        cc: doc(
          { enum: ['dctcp', 'reno'] },
          'baseline: DCTCP (ECN-driven) or loss-based Reno (ECN off: fills the buffers, as the Linux TCP Fastpass is compared with)',
          'dctcp',
        ),
        rwnd: doc(
          bytes,
          "baseline: the receiver's window, a flow never has more unacknowledged (bytes; default: no limit)",
        ),
        initCwnd: doc({ type: 'integer', minimum: 1 }, 'baseline: initial congestion window, frames', 10),
        g: doc(
          { type: 'number', exclusiveMinimum: 0, maximum: 1 },
          "baseline DCTCP: the gain of alpha's moving average of the marked fraction (RFC 8257: 1/16)",
          1 / 16,
        ),
        minRto: doc(duration, 'baseline: the smallest retransmission timeout (ns: 200us)', '200us'),
        maxRto: doc(
          duration,
          'baseline: the largest retransmission timeout, after backoff (ns: 20ms)',
          '20ms',
        ),
        dupAcks: doc(
          { type: 'integer', minimum: 1 },
          'baseline: duplicate acknowledgements that trigger a fast retransmit',
          3,
        ),
        rate: doc(rate, "udp: the host's send rate (bit/s; default: its NIC rate)"),
        flowRate: doc(rate, "udp: every flow's own rate (bit/s; default: unpaced)"),
      },
    },
    workload: workloadSchema,
    run: {
      type: 'object',
      additionalProperties: false,
      description: 'how the run is carried out and what it records',
      properties: {
        sync: doc(
          { enum: ['conservative', 'dilated'] },
          'conservative: exact, the same bytes on every run; dilated: real time slowed by tdf (statistical)',
          DEFAULTS.run.sync,
        ),
        step: doc(
          duration,
          'conservative mode: the orchestrator grants the nodes time in steps this long (progress, faults and Ctrl-C act at step ends; ns: 100us)',
          DEFAULTS.run.step,
        ),
        drain: doc(
          duration,
          "after the workload's duration, the run goes on this long for flows to finish (ns: 20ms)",
          DEFAULTS.run.drain,
        ),
        sample: doc(duration, 'queue occupancy sampling period, queues.csv (ns: 5us)', DEFAULTS.run.sample),
        interval: doc(
          duration,
          'per-sender throughput intervals for summary.fairness and convergence (ns: 100us)',
          DEFAULTS.run.interval,
        ),
        missThreshold: doc(
          probability,
          'dilated mode: the largest share of causality misses a faithful run may have',
          DEFAULTS.run.missThreshold,
        ),
        logLevel: doc(
          { enum: ['trace', 'debug', 'info', 'warn', 'error', 'silent'] },
          "the node processes' log level (logs/<node>.log)",
          DEFAULTS.run.logLevel,
        ),
        plots: doc(
          { type: 'boolean' },
          'draw the per-run plots (plots/*.svg, *.png) and the results page (report.html)',
          DEFAULTS.run.plots,
        ),
        capture: {
          type: 'array',
          items: captureRef,
          description:
            'links and nodes whose frames are written to <out>/capture/ as pcapng, one file per egress port',
        },
        captureLimit: {
          type: 'integer',
          minimum: 1,
          description: 'frames written per captured port at most; the rest are counted',
          default: DEFAULTS.run.captureLimit,
        },
      },
    },
    chaos: chaosSchema,
    invariants: invariantsSchema,
    timeline: {
      type: 'array',
      description: 'faults at fixed times: one entry per action, on a node, a link or a clock',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['at', 'action'],
        properties: {
          at: doc(duration, 'when it fires, after traffic start (ns: 5ms)'),
          action: doc(
            { enum: [...TIMELINE_ACTIONS] },
            'kill, pause/resume, stop/start (containers), disconnect/connect (containers) a node; link-down/up, link-lossy, link-impair (netem-like impairments over the link’s own; link-up takes them away), link-flap (down and up by turns until `until`) a link; node-impair: link-impair on every link of a node (types and flows narrow it to a class of frames or a share of flows: gray failures); partition/heal the links between node sets; ptp-loss, clock-step, clock-freq a clock',
          ),
          node: doc(nodeName, 'the node it acts on (node actions, clock actions)'),
          link: linkRef,
          groups: {
            type: 'array',
            minItems: 2,
            items: { type: 'array', minItems: 1, items: nodeName },
            description:
              'partition, heal: two or more sets of node names; every link between two sets goes down (partition) or up (heal)',
          },
          down: doc(
            distribution,
            'link-flap: how long the link stays down each time (a duration or uniform(a, b) / lognormal(median, sigma))',
          ),
          up: doc(distribution, 'link-flap: how long it stays up between (the same forms)'),
          until: doc(
            duration,
            'link-flap: when the flapping ends, after traffic start (the link is up from then)',
          ),
          seed: doc(
            { type: 'integer', minimum: 0 },
            "link-flap: the seed of its down and up draws (default: from the scenario's seed and the entry's place in the timeline); a chaos run gives each flap its own, so its reproducer replays the same flaps",
          ),
          direction: doc(
            { enum: ['both', 'forward', 'reverse'] },
            'link actions: both directions, or only from the first named node (forward) or toward it (reverse)',
            'both',
          ),
          ...TIMELINE_IMPAIR,
          loss: {
            description: `link-lossy, ptp-loss: the share of frames lost (0 ends the loss); link-impair: ${TIMELINE_IMPAIR.loss.description}`,
            anyOf: TIMELINE_IMPAIR.loss.anyOf,
          },
          corrupt: {
            description: `link-lossy: the share of frames corrupted (CRC error: dropped and counted); link-impair: ${TIMELINE_IMPAIR.corrupt.description}`,
            anyOf: TIMELINE_IMPAIR.corrupt.anyOf,
          },
          delay: {
            description: `link-lossy: extra one-way delay on the link (ns); link-impair: ${TIMELINE_IMPAIR.delay.description}`,
            anyOf: TIMELINE_IMPAIR.delay.anyOf,
          },
          step: doc(signedDuration, "clock-step: the node's clock jumps by this (ns, may be negative: -2us)"),
          freq: doc({ type: 'number' }, "clock-freq: the node's oscillator's new frequency error, ppm"),
          ifPresent: {
            type: 'boolean',
            description:
              "only when the topology has the entry's node (a scheme's arbiter): the same file run as a baseline (--set scheme.kind=ecmp) leaves it out",
          },
        },
      },
    },
  },
} as const;

/**
 * The scenario schema with the schemes registered now (orchestrator/registry/index.ts) in its `scheme:`
 * section.
 */
export function scenarioSchema() {
  return { ...scenarioSchemaBody, properties: { ...scenarioSchemaBody.properties, scheme: schemeSchema() } };
}

/**
 * The schema as a standalone JSON Schema document (`dcemu schema`, docs/scenario.schema.json), for
 * editors that validate YAML: `# yaml-language-server: $schema=<path>` at the top of a scenario.
 */
export function scenarioSchemaDocument(): Record<string, unknown> {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'dcemu scenario',
    description:
      'A dcemu scenario file: topology, links, scheme, clocks, workload, run settings and fault timeline.',
    ...scenarioSchema(),
  };
}
