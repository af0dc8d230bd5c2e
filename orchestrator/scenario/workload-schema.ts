/**
 * The scenario schema's `workload:` section (orchestrator/scenario/schema.ts): the traffic, drawn from a
 * pattern, ON/OFF sources or listed flow by flow.
 */
import { SizeCdf } from '../../host/cdf.js';
import { DEFAULTS } from './defaults.js';
import { distribution, doc, nodeName } from './schema-fragments.js';
import { bytes, duration } from './units.js';

/** the flow-size distributions data/workloads/ holds (`workload.sizes`) */
const WORKLOADS = SizeCdf.names();

export const workloadSchema = {
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
          until: doc(duration, 'with every: no start at or after this (ns); default the end of the workload'),
          stop: doc(
            duration,
            "when the application stops sending, after traffic start (ns): nothing new goes out, frames already handed down still leave, and an unfinished flow ends 'stopped' (a bulk flow that leaves, Fastpass §7.2); not with every; on the baseline transport, with schemes that carry flows on it",
          ),
        },
      },
    },
  },
} as const;
