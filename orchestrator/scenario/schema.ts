/**
 * The scenario file's JSON schema (docs/scenarios.md). Durations, rates and sizes are strings with units
 * (`10us`, `10Gbps`, `150KB`) or plain numbers (ns, bit/s, bytes); `resolve.ts` turns them into
 * numbers. Every object is closed (`additionalProperties: false`) so a typo is an error, not a
 * silently ignored key.
 */

import { SizeCdf } from '../../host/cdf.js';
import { schemeSchema } from '../registry/index.js';
import { chaosSchema, invariantsSchema } from './chaos-schema.js';
import { DEFAULTS } from './defaults.js';
import { eachLinkSchema, impairmentProperties } from './impairments.js';
import { bytes, duration, rate } from './units.js';

/** a schema fragment with its description (and its default, when it has one) */
const doc = <T extends object>(fragment: T, description: string, dflt?: unknown) => ({
  ...fragment,
  description,
  ...(dflt !== undefined && { default: dflt }),
});

const nodeName = { type: 'string', minLength: 1 } as const;
export const signedDuration = {
  type: ['string', 'number'],
  pattern: '^\\s*-?[0-9]*\\.?[0-9]+(e[-+]?\\d+)?\\s*(ns|us|µs|ms|s)?\\s*$',
};
/** a value or a distribution: `uniform(-50, 50)`, `normal(0, 10us)`, `lognormal(700ns, 1.5)` */
const distribution = {
  type: ['string', 'number'],
  pattern:
    '^\\s*(-?[0-9.]+\\s*[a-zµ]*|(uniform|normal|lognormal)\\(\\s*-?[0-9.]+\\s*[a-zµ]*\\s*,\\s*-?[0-9.]+\\s*[a-zµ]*\\s*\\))\\s*$',
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

/** the flow-size distributions data/workloads/ holds (`workload.sizes`) */
const WORKLOADS = SizeCdf.names();

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
    clocks: {
      type: 'object',
      additionalProperties: false,
      description:
        "every node's own oscillator (absent: ideal clocks): its initial offset, frequency error, wander and read granularity; ptp: disciplines it",
      properties: {
        offset: doc(
          distribution,
          "each node's initial clock offset: a value or a distribution of durations, e.g. uniform(-10us, 10us)",
          'uniform(-10us, 10us)',
        ),
        freq: doc(
          distribution,
          "each node's frequency error in ppm: a value or a distribution, e.g. uniform(-50, 50)",
          'uniform(-50, 50)',
        ),
        wander: doc(
          { type: 'number', minimum: 0 },
          'random-walk frequency wander, ppm per √s (0: a steady frequency)',
          0.5,
        ),
        granularity: doc(duration, 'clock reads come in steps of this (8ns: a 125 MHz PHC counter)', '8ns'),
        reference: doc(
          nodeName,
          'a node whose clock is perfect (error 0), e.g. the grandmaster (default: none)',
        ),
      },
    },
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
    /** host-side timing jitter models (seeded): software stamp delay, late transmissions */
    jitter: {
      type: 'object',
      additionalProperties: false,
      description: 'host timing noise, seeded: how late software timestamps and transmissions are',
      properties: {
        stamp: doc(
          distribution,
          "software timestamps' delay after the true event (PTP software stamping), a duration or a distribution (default in conservative mode: lognormal(40ns, 1), a fit of what dilated runs measure; none in dilated mode, which has the machine's own)",
        ),
        send: doc(
          distribution,
          'how late each host transmission leaves after its scheduled time, a duration or a distribution, e.g. lognormal(200ns, 1) (default: none, ideal send timing)',
        ),
      },
    },
    ptp: {
      type: 'object',
      additionalProperties: false,
      description:
        'PTP (IEEE 1588) over the fabric: hosts discipline their clocks (clocks:) to a grandmaster the BMCA elects',
      properties: {
        timestamping: doc(
          { enum: ['hardware', 'software'] },
          'hardware: NIC stamps (exact); software: stamps taken in the stack, late by jitter.stamp',
          'hardware',
        ),
        switchClocks: doc(
          { enum: ['transparent', 'boundary', 'none'] },
          'what the switches are to PTP: transparent (they add each Sync/Delay_Req residence time to its correction field), boundary (each disciplines its own clock from its best port and is the master of the others, so every exchange is link-local and stepsRemoved grows per switch; hardware stamps), none (they forward PTP frames as any other)',
          'transparent',
        ),
        transparentClocks: doc(
          { type: 'boolean' },
          'the older form of switchClocks: true is transparent, false is none',
        ),
        delayMechanism: {
          enum: ['e2e', 'p2p'],
          description:
            "e2e (default): slaves measure the path to the master with Delay_Req; p2p: every port measures its link with Pdelay_Req, and transparent switches add the ingress link delay to every Sync (boundary clocks use their slave port's link delay)",
        },
        warmup: doc(
          duration,
          "how long PTP runs before traffic starts (ns: 5ms): the clocks synchronize first, as a datacenter's are long before a job runs; clock figures count from traffic start, and the warm-up's events and samples carry negative times",
          0,
        ),
        syncInterval: doc(duration, "the master's Sync period (ns: 100us)", '100us'),
        logSyncInterval: doc(
          { type: 'integer', minimum: -24, maximum: 8 },
          'the Sync period as IEEE 1588 and linuxptp give it, log₂ of seconds (-13: 122.07 µs); instead of syncInterval',
        ),
        announceInterval: doc(duration, "the master's Announce period (ns: 1ms)", '1ms'),
        logAnnounceInterval: doc(
          { type: 'integer', minimum: -24, maximum: 8 },
          'the Announce period, log₂ of seconds (-10: 977 µs); instead of announceInterval',
        ),
        delayReqInterval: doc(
          duration,
          "a slave's mean Delay_Req interval: each waits uniform in [0, 2 × this) (ns; default: the sync interval)",
        ),
        logMinDelayReqInterval: doc(
          { type: 'integer', minimum: -24, maximum: 8 },
          'the Delay_Req interval, log₂ of seconds (linuxptp logMinDelayReqInterval); instead of delayReqInterval',
        ),
        announceTimeout: doc(
          { type: 'integer', minimum: 1 },
          'announce intervals without an Announce before a slave drops its master and the BMCA runs again',
          3,
        ),
        candidates: doc(
          { type: 'array', items: nodeName, minItems: 1 },
          'master-capable hosts, best first (ties in their datasets go by this order; default: the first and the last host, or the hosts in datasets)',
        ),
        datasets: {
          type: 'object',
          description:
            "master-capable hosts' clock datasets (IEEE 1588-2019 7.6.2), compared by the BMCA field by field, lower wins; fields left out take the defaults (priority1 128, clockClass 248, clockAccuracy 254, offsetScaledLogVariance 65535, priority2 128)",
          additionalProperties: {
            type: 'object',
            additionalProperties: false,
            properties: {
              priority1: doc(
                { type: 'integer', minimum: 0, maximum: 255 },
                "compared first; lower wins (an operator's choice of grandmaster)",
                128,
              ),
              clockClass: doc(
                { type: 'integer', minimum: 0, maximum: 254 },
                'traceability of the time source (6: locked to GPS; 248: default); lower wins',
                248,
              ),
              clockAccuracy: doc(
                { type: 'integer', minimum: 0, maximum: 255 },
                'accuracy class (0x20: 25 ns, ..., 254: unknown); lower wins',
                254,
              ),
              offsetScaledLogVariance: doc(
                { type: 'integer', minimum: 0, maximum: 65535 },
                "the oscillator's stability (65535: not computed); lower wins",
                65535,
              ),
              priority2: doc(
                { type: 'integer', minimum: 0, maximum: 255 },
                'compared after the quality fields; lower wins (default 128, plus the rank in candidates)',
              ),
            },
          },
        },
        delayFilter: doc(
          { type: 'integer', minimum: 1 },
          'path delay measurements in the moving median a slave uses (linuxptp delay_filter_length)',
          10,
        ),
        lockThreshold: doc(
          duration,
          'a slave counts as locked once its offset stays within this (default 100ns with hardware stamps, 2us with software)',
        ),
        sample: doc(
          duration,
          "how often each clock's true error is sampled into clocks.csv (ns: 10us)",
          '10us',
        ),
        servo: {
          type: 'object',
          additionalProperties: false,
          description:
            "the PI servo, as linuxptp's pi.c: kp = min(kpScale · interval^kpExponent, 0.7), ki likewise (defaults: linuxptp's for the stamping mode)",
          properties: {
            kpScale: doc(
              { type: 'number', exclusiveMinimum: 0 },
              'proportional gain scale (linuxptp pi_proportional_scale; default 0.7 hardware, 0.1 software)',
            ),
            kpExponent: doc(
              { type: 'number' },
              'proportional gain exponent of the sync interval in s (-1: gains scale with the short intervals of a fabric)',
              -1,
            ),
            kiScale: doc(
              { type: 'number', minimum: 0 },
              'integral gain scale (linuxptp pi_integral_scale; default 0.3 hardware, 0.001 software)',
            ),
            kiExponent: doc({ type: 'number' }, 'integral gain exponent of the sync interval in s', -1),
            maxFrequency: doc(
              { type: 'number', exclusiveMinimum: 0 },
              'the largest frequency correction, ppb (linuxptp max_frequency)',
              900000,
            ),
            stepThreshold: doc(
              duration,
              'an offset above this steps the clock instead of slewing it (0: never after the first)',
              0,
            ),
            firstStepThreshold: doc(
              duration,
              'the first measured offset above this steps the clock (linuxptp first_step_threshold is 20 µs at 1 s intervals; slewing that much at the 900 ppm clamp would take 22 ms here)',
              '1us',
            ),
          },
        },
      },
    },
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
    workload: {
      type: 'object',
      additionalProperties: false,
      required: ['pattern'],
      description:
        'the traffic: flows drawn from a pattern, sizes and load (Poisson arrivals, seeded), ON/OFF sources, or listed one by one',
      properties: {
        pattern: doc(
          { enum: ['all-to-all', 'permutation', 'incast', 'list', 'on-off'] },
          'all-to-all: each flow between two random hosts; permutation: each host sends to one fixed partner; incast: fanIn senders to one target; list: the flows given in flows; on-off: every host alternates OFF and ON periods, each ON period a UDP flow to a random other host (F10 §7.2, onOff)',
        ),
        sizes: doc(
          { enum: WORKLOADS },
          'the flow-size distribution, a published one from data/workloads/ (or fixedSize)',
        ),
        fixedSize: doc(bytes, 'every flow this size instead of a distribution (bytes: 20KB)'),
        load: doc(
          { type: 'number', exclusiveMinimum: 0, maximum: 1 },
          "offered load as a share of each sender's host link rate; required with a pattern (on-off: optional, it scales the packet gaps)",
        ),
        duration: doc(
          duration,
          'flows start within [0, duration) (ns: 20ms); a list without one ends as soon as its flows are done',
          DEFAULTS.workload.duration,
        ),
        onOff: {
          type: 'object',
          additionalProperties: false,
          description:
            "on-off: the ON/OFF sources (F10 §7.2 after Benson et al.'s IMC'10 measurements; the defaults are ours, see docs/scenarios.md); with load, the packet gaps are scaled so the mean offered load is that share of the host link",
          properties: {
            ...Object.fromEntries(
              (['on', 'off'] as const).map((k) => [
                k,
                doc(
                  distribution,
                  `the length of an ${k.toUpperCase()} period, a duration or a distribution (ns: lognormal(300us, 1))`,
                  DEFAULTS.workload.onOff[k],
                ),
              ]),
            ),
            interarrival: doc(
              distribution,
              "the gap between packet starts in an ON period, a duration or a distribution; with load, only its shape counts (it is scaled so that packet·8·E[on]/(E[gap]·(E[on]+E[off])) = load × the host link rate; a log-normal's mean is median·e^(σ²/2))",
              DEFAULTS.workload.onOff.interarrival,
            ),
            packet: doc(
              bytes,
              'every packet, bytes on the wire with its 40 B of headers (41..1500)',
              DEFAULTS.workload.onOff.packet,
            ),
          },
        },
        admissible: doc(
          duration,
          "admissible traffic (Harmony §5): in every window this long, the bytes each host sends and each host receives take less than the window at the host link rate; a flow that would break it starts later, at the first time it fits (no flow is dropped). A Poisson pattern's main flows only, not the background (ns: 252us; default: plain Poisson)",
        ),
        fanIn: doc({ type: 'integer', minimum: 1 }, 'incast: senders per burst (default: every other host)'),
        target: doc(nodeName, 'incast: the receiving host (default: a random host for each burst)'),
        background: {
          type: ['object', 'null'],
          additionalProperties: false,
          required: ['pattern'],
          description:
            'best-effort traffic beside the main workload (Harmony: the third class), with its own pattern, sizes and load; null: none',
          properties: {
            pattern: doc({ enum: ['all-to-all', 'permutation'] }, 'as workload.pattern'),
            sizes: doc({ enum: WORKLOADS }, 'as workload.sizes'),
            fixedSize: doc(bytes, 'as workload.fixedSize (bytes)'),
            load: doc({ type: 'number', exclusiveMinimum: 0, maximum: 1 }, 'as workload.load'),
          },
        },
        senders: {
          type: ['array', 'string'],
          items: nodeName,
          description: "all-to-all: only these hosts send (a list, or a range 'h0..h7')",
        },
        receivers: {
          type: ['array', 'string'],
          items: nodeName,
          description: "all-to-all: each flow goes to one of these hosts (a list, or a range 'h8..h15')",
        },
        deadlines: {
          type: 'object',
          additionalProperties: false,
          required: ['mean'],
          description:
            'a deadline for each flow (a share of them): exponential with this mean, at least atLeast times its line-rate transfer time; summary.flows.deadlines counts the misses',
          properties: {
            mean: doc(duration, 'the mean of the exponential deadlines (ns: 1ms); required'),
            atLeast: doc(
              { type: 'number', minimum: 0 },
              "a deadline is at least this many times the flow's line-rate transfer time",
              DEFAULTS.workload.deadlineAtLeast,
            ),
            share: doc(
              { type: 'number', exclusiveMinimum: 0, maximum: 1 },
              'the share of flows that get a deadline',
              1,
            ),
          },
        },
        flows: {
          type: 'array',
          description: 'list: the flows, one entry each',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['src', 'dst', 'size'],
            properties: {
              src: doc(nodeName, 'the sending host'),
              dst: doc(nodeName, 'the receiving host'),
              size: doc(bytes, 'bytes to deliver (1MB)'),
              start: doc(duration, 'when it starts, after traffic start (ns)', 0),
              copies: doc(
                { type: 'integer', minimum: 1 },
                'this many such flows at once (parallel connections, as iperf -P)',
                1,
              ),
              every: doc(
                duration,
                'the flow again every this long from its start, until the workload ends (ping every 10 ms: every: 10ms); default once',
              ),
              until: doc(
                duration,
                'with every: no start at or after this (ns); default the end of the workload',
              ),
              stop: doc(
                duration,
                "when the application stops sending, after traffic start (ns): nothing new goes out, frames already handed down still leave, and an unfinished flow ends 'stopped' (a bulk flow that leaves, Fastpass §7.2); not with every; on the baseline transport, with schemes that carry flows on it",
              ),
            },
          },
        },
      },
    },
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
