/**
 * The `chaos:` section of the scenario schema (the failure model of `dcemu chaos`): its own module, free
 * of imports, so the scenario schema takes it without a circle through the resolver.
 */

export const FAILURE_KINDS = [
  'kill',
  'pause',
  'link-down',
  'link-lossy',
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
      description: 'congestion drops break the run too (zero-loss fabrics)',
    },
    assert: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      description: "checks on summary.json figures, e.g. 'flows.slowdownP99 <= 50', 'drops.noRoute == 0'",
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
        from: { type: ['string', 'number'] },
        to: { type: ['string', 'number'] },
      },
    },
    maxFaults: { type: 'integer', minimum: 1, maximum: 1000 },
    failures: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['kind', 'targets', 'between'],
        properties: {
          kind: { enum: [...FAILURE_KINDS] },
          targets,
          between: { ...dist, description: 'time between failures of one component (from its repair)' },
          repair: { ...dist, description: 'time to repair (pause, link-down, link-lossy)' },
          loss: { type: 'number', minimum: 0, maximum: 1 },
          corrupt: { type: 'number', minimum: 0, maximum: 1 },
          step: { ...dist, description: 'clock-step: the step (signed duration or distribution)' },
          freq: {
            type: ['string', 'number'],
            description: 'clock-freq: the new frequency error in ppm (number or distribution)',
          },
        },
      },
    },
    invariants: invariantsSchema,
  },
};
