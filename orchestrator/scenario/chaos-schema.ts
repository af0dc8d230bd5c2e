/**
 * The `chaos:` section of the scenario schema (the failure model of `dcemu chaos`): its own module,
 * importing no resolver, so the scenario schema takes it without a circle through one.
 */
import { impairmentProperties } from './impairments.js';

/** link-impair's fields, as the timeline's: a delay on top of the link's own */
const IMPAIR = impairmentProperties('link-impair: extra one-way delay on top of the link’s own');

export const FAILURE_KINDS = [
  'kill',
  'pause',
  'link-down',
  'link-lossy',
  'link-impair',
  'link-flap',
  'partition',
  'clock-step',
  'clock-freq',
] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

const dist = {
  type: ['string', 'number'],
  description: 'a duration or a distribution: lognormal(2ms, 1), uniform(1ms, 3ms), normal(5ms, 1ms)',
};
const targets = {
  description:
    'which components fail: switches | hosts | arbiters | nodes (node kinds), fabric | host | links (link kinds: switch–switch, host–switch, both), or a list of node names and [a, b] links; names may end in * (spine*, [leaf*, spine*])',
  anyOf: [
    { type: 'string', minLength: 1 },
    {
      type: 'array',
      minItems: 1,
      items: {
        anyOf: [
          { type: 'string', minLength: 1 },
          { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 2, maxItems: 2 },
        ],
      },
    },
  ],
};

/**
 * What must hold after a run, beyond what always must (docs/chaos.md): the `invariants:` of a chaos
 * section, checked after every chaos run, and a scenario's own, checked by `dcemu run` (a chaos
 * reproducer carries the ones it breaks).
 */
export const invariantsSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    "checked after the run besides every flow accounted for, no process left, no loss outside the faults, a faithful run and the scheme's own promises; a broken one fails the run",
  properties: {
    lossless: {
      type: 'boolean',
      description: 'true: congestion drops break the run too, for zero-loss fabrics (default false)',
    },
    assert: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      description:
        "checks on summary.json figures, each '<field> <op> <number>' with < <= == != >= >, e.g. 'flows.slowdownP99 <= 50', 'drops.noRoute == 0' (default: none)",
    },
  },
};

/** The `chaos:` section of the scenario schema. */
export const chaosSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['failures'],
  description: 'failure model for `dcemu chaos` (ignored by `dcemu run`)',
  properties: {
    window: {
      type: 'object',
      additionalProperties: false,
      description: 'when failures may strike, from traffic start (default: the workload duration)',
      properties: {
        from: {
          type: ['string', 'number'],
          description: 'its start, from traffic start (duration, ns if a number; default 0)',
        },
        to: {
          type: ['string', 'number'],
          description:
            "its end, from traffic start, after from (duration, ns if a number; default: the workload's duration)",
        },
      },
    },
    maxFaults: {
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      description: 'faults drawn per run at most; the earliest are kept (default 200)',
    },
    concurrent: {
      type: 'integer',
      minimum: 1,
      description:
        'faults out at the same time at most: a failure drawn while this many are out is left out (default: no limit; 1: one failure at a time)',
    },
    failures: {
      type: 'array',
      minItems: 1,
      description:
        'what fails: per entry, each of its targets fails and is repaired in turn, drawn from its distributions (required; faults never overlap on one component)',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['kind', 'between'],
        properties: {
          kind: {
            enum: [...FAILURE_KINDS],
            description:
              "kill: SIGKILL the node, which stays dead; pause: SIGSTOP it until repair; link-down: the link carries nothing until repair; link-lossy: it drops and corrupts frames (loss, corrupt) until repair; link-impair: netem-like impairments (delay, loss, duplicate, reorder, corrupt, rate, narrowed by types and flows: gray failures; docs/scenarios.md#impairments) over the link's own until repair; link-flap: the link goes down and up by turns (down, up) until repair; partition: size of the targets (or the first of two groups) cut from their neighbours (the second group) until repair, the heal; clock-step: the node's oscillator jumps by step; clock-freq: its frequency error becomes freq (clock kinds need a clocks: section; the PTP servo repairs them)",
          },
          targets: {
            ...targets,
            description: `${targets.description}; required except for a partition given groups`,
          },
          size: {
            type: 'integer',
            minimum: 1,
            description:
              'partition: how many of its targets are cut off together, drawn anew each time (default 1); each is cut from every neighbour that is not cut with it (control links to arbiters stay, unless an arbiter is cut)',
          },
          groups: {
            type: 'array',
            minItems: 2,
            maxItems: 2,
            items: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
            description:
              'partition, instead of targets: two groups of nodes (names, roles or globs: [[leaf0, h0, h1], [spine*]]); every link between them is cut at once',
          },
          down: {
            ...dist,
            description:
              "link-flap, required (the other kinds refuse it): how long the link stays down each time, a duration ('50us' or ns) or uniform(a, b) / lognormal(median, sigma)",
          },
          up: {
            ...dist,
            description: 'link-flap, required: how long it stays up between, in the same forms',
          },
          between: {
            ...dist,
            description:
              "time between failures of one component, from the window's start, then from its last repair: a duration ('20ms' or ns) or uniform(a, b) / lognormal(median, sigma), above zero; required (no normal: it may be negative)",
          },
          repair: {
            ...dist,
            description:
              "time to repair: a duration ('300us' or ns) or uniform(a, b) / lognormal(median, sigma), above zero; required for pause, link-down, link-lossy, link-impair, link-flap (how long it flaps) and partition (when it heals), refused for the other kinds",
          },
          loss: {
            description: `link-lossy: probability that a frame is dropped (default 0; link-lossy needs loss or corrupt, the other kinds refuse it); link-impair: ${IMPAIR.loss.description}`,
            anyOf: IMPAIR.loss.anyOf,
          },
          corrupt: {
            description: `link-lossy: probability that a frame is corrupted (default 0; link-lossy needs loss or corrupt, the other kinds refuse it); link-impair: ${IMPAIR.corrupt.description}`,
            anyOf: IMPAIR.corrupt.anyOf,
          },
          delay: IMPAIR.delay,
          duplicate: IMPAIR.duplicate,
          reorder: IMPAIR.reorder,
          rate: IMPAIR.rate,
          types: IMPAIR.types,
          flows: IMPAIR.flows,
          step: {
            ...dist,
            description:
              "clock-step, required (the other kinds refuse it): the step, a signed duration ('-20us' or ns) or a distribution, e.g. normal(0, 20us)",
          },
          freq: {
            type: ['string', 'number'],
            description:
              'clock-freq, required (the other kinds refuse it): the new frequency error in ppm, a number or a distribution, e.g. uniform(-100, 100)',
          },
        },
      },
    },
    invariants: invariantsSchema,
  },
};
