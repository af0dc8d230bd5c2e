/**
 * The scenario file's JSON schema (DESIGN §4). Durations, rates and sizes are strings with units
 * (`10us`, `10Gbps`, `150KB`) or plain numbers (ns, bit/s, bytes); `resolve.ts` turns them into
 * numbers. Every object is closed (`additionalProperties: false`) so a typo is an error, not a
 * silently ignored key.
 */

import { schemeSchema } from '../schemes/index.js';
import { chaosSchema, invariantsSchema } from './chaos-schema.js';
import { bytes, duration, rate } from './units.js';

const nodeName = { type: 'string', minLength: 1 };
const signedDuration = {
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

const link = {
  type: 'object',
  additionalProperties: false,
  properties: { rate, delay: duration },
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

export const TIMELINE_ACTIONS = [
  'kill',
  'pause',
  'resume',
  'link-down',
  'link-up',
  'link-lossy',
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
const computeRole = {
  type: 'object',
  additionalProperties: false,
  properties: { model: computeModel, scale: computeScale },
} as const;

export const scenarioSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['topology', 'workload'],
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    tdf: { type: 'number', exclusiveMinimum: 0 },
    seed: { type: 'integer' },
    topology: {
      type: 'object',
      required: ['kind'],
      additionalProperties: false,
      properties: {
        kind: { enum: ['leaf-spine', 'fat-tree', 'f10', 'dumbbell', 'star'] },
        leaves: { type: 'integer', minimum: 1 },
        spines: { type: 'integer', minimum: 1 },
        hostsPerLeaf: { type: 'integer', minimum: 1 },
        k: { type: 'integer', minimum: 2, multipleOf: 2 },
        /** f10: switch levels (L + 1); default 3 */
        levels: { type: 'integer', minimum: 2 },
        /** f10: AB FatTree or standard FatTree wiring; default ab */
        variant: { enum: ['ab', 'standard'] },
        hostsPerSide: { type: 'integer', minimum: 1 },
        hosts: { type: 'integer', minimum: 2 },
      },
    },
    links: {
      type: 'object',
      additionalProperties: false,
      properties: { host: link, fabric: link },
    },
    ports: {
      type: 'object',
      additionalProperties: false,
      properties: {
        buffer: bytes,
        ecnThreshold: bytes,
        commitAhead: duration,
        hostBuffer: bytes,
      },
    },
    liveness: {
      type: 'object',
      additionalProperties: false,
      properties: { interval: duration, multiplier: { type: 'integer', minimum: 1 } },
    },
    clocks: {
      type: 'object',
      additionalProperties: false,
      properties: {
        offset: distribution,
        freq: distribution,
        wander: { type: 'number', minimum: 0 },
        granularity: duration,
        reference: nodeName,
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
        host: computeRole,
        arbiter: computeRole,
      },
    },
    /** host-side timing jitter models (seeded): software stamp delay, late transmissions */
    jitter: {
      type: 'object',
      additionalProperties: false,
      properties: { stamp: distribution, send: distribution },
    },
    ptp: {
      type: 'object',
      additionalProperties: false,
      properties: {
        timestamping: { enum: ['hardware', 'software'] },
        transparentClocks: { type: 'boolean' },
        delayMechanism: {
          enum: ['e2e', 'p2p'],
          description:
            'e2e (default): slaves measure the path to the master with Delay_Req; p2p: every port measures its link with Pdelay_Req, and the switches, as peer-to-peer transparent clocks, add the ingress link delay to every Sync',
        },
        syncInterval: duration,
        announceInterval: duration,
        announceTimeout: { type: 'integer', minimum: 1 },
        candidates: { type: 'array', items: nodeName, minItems: 1 },
        datasets: {
          type: 'object',
          description:
            "master-capable hosts' clock datasets (IEEE 1588-2019 7.6.2), compared by the BMCA field by field, lower wins; fields left out take the defaults (priority1 128, clockClass 248, clockAccuracy 254, offsetScaledLogVariance 65535, priority2 128)",
          additionalProperties: {
            type: 'object',
            additionalProperties: false,
            properties: {
              priority1: { type: 'integer', minimum: 0, maximum: 255 },
              clockClass: { type: 'integer', minimum: 0, maximum: 254 },
              clockAccuracy: { type: 'integer', minimum: 0, maximum: 255 },
              offsetScaledLogVariance: { type: 'integer', minimum: 0, maximum: 65535 },
              priority2: { type: 'integer', minimum: 0, maximum: 255 },
            },
          },
        },
        delayFilter: { type: 'integer', minimum: 1 },
        lockThreshold: duration,
        sample: duration,
        servo: {
          type: 'object',
          additionalProperties: false,
          properties: {
            kpScale: { type: 'number', exclusiveMinimum: 0 },
            kpExponent: { type: 'number' },
            kiScale: { type: 'number', minimum: 0 },
            kiExponent: { type: 'number' },
            maxFrequency: { type: 'number', exclusiveMinimum: 0 },
            stepThreshold: duration,
            firstStepThreshold: duration,
          },
        },
      },
    },
    scheme: schemeSchema,
    transport: {
      type: 'object',
      additionalProperties: false,
      properties: {
        kind: { enum: ['baseline', 'udp'] },
        // baseline only: DCTCP (ECN-driven), or loss-based Reno (ECN off: fills the buffers, as the
        // Linux TCP Fastpass is compared with)
        cc: { enum: ['dctcp', 'reno'] },
        // the receiver's window: a flow never has more than this unacknowledged (default: no limit)
        rwnd: bytes,
        initCwnd: { type: 'integer', minimum: 1 },
        g: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
        minRto: duration,
        maxRto: duration,
        dupAcks: { type: 'integer', minimum: 1 },
        // udp only: the host's send rate (default its NIC rate), and every flow's own rate (default unpaced)
        rate,
        flowRate: rate,
      },
    },
    workload: {
      type: 'object',
      additionalProperties: false,
      required: ['pattern'],
      properties: {
        pattern: { enum: ['all-to-all', 'permutation', 'incast', 'list'] },
        sizes: { type: 'string' },
        fixedSize: bytes,
        load: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
        duration,
        fanIn: { type: 'integer', minimum: 1 },
        target: nodeName,
        // best-effort traffic beside the main workload (Harmony: the third class); null: none
        background: {
          type: ['object', 'null'],
          additionalProperties: false,
          required: ['pattern'],
          properties: {
            pattern: { enum: ['all-to-all', 'permutation'] },
            sizes: { type: 'string' },
            fixedSize: bytes,
            load: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
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
            mean: duration,
            atLeast: { type: 'number', minimum: 0 },
            share: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
          },
        },
        flows: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['src', 'dst', 'size'],
            properties: {
              src: nodeName,
              dst: nodeName,
              size: bytes,
              start: duration,
              /** this many such flows (parallel connections, as iperf -P) */
              copies: { type: 'integer', minimum: 1 },
            },
          },
        },
      },
    },
    run: {
      type: 'object',
      additionalProperties: false,
      properties: {
        sync: { enum: ['conservative', 'dilated'] },
        step: duration,
        drain: duration,
        sample: duration,
        /** per-sender throughput intervals (summary.fairness) */
        interval: duration,
        missThreshold: probability,
        logLevel: { enum: ['trace', 'debug', 'info', 'warn', 'error', 'silent'] },
        plots: { type: 'boolean' },
        capture: {
          type: 'array',
          items: captureRef,
          description:
            'links and nodes whose frames are written to <out>/capture/ as pcapng, one file per egress port',
        },
        captureLimit: {
          type: 'integer',
          minimum: 1,
          description: 'frames written per captured port at most; the rest are counted (default 100000)',
        },
      },
    },
    chaos: chaosSchema,
    invariants: invariantsSchema,
    timeline: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['at', 'action'],
        properties: {
          at: duration,
          action: { enum: [...TIMELINE_ACTIONS] },
          node: nodeName,
          link: linkRef,
          direction: { enum: ['both', 'forward', 'reverse'] },
          loss: probability,
          corrupt: probability,
          delay: duration,
          step: signedDuration,
          freq: { type: 'number' },
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
 * The schema as a standalone JSON Schema document (`dcemu schema`, docs/scenario.schema.json), for
 * editors that validate YAML: `# yaml-language-server: $schema=<path>` at the top of a scenario.
 */
export function scenarioSchemaDocument(): Record<string, unknown> {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'dcemu scenario',
    description:
      'A dcemu scenario file: topology, links, scheme, clocks, workload, run settings and fault timeline.',
    ...scenarioSchema,
  };
}
