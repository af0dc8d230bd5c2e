/**
 * Fragments the scenario schema's sections share (orchestrator/scenario/schema.ts and the sections in
 * their own modules: clock-schema.ts, workload-schema.ts).
 */

/** a schema fragment with its description (and its default, when it has one) */
export const doc = <T extends object>(fragment: T, description: string, dflt?: unknown) => ({
  ...fragment,
  description,
  ...(dflt !== undefined && { default: dflt }),
});

export const nodeName = { type: 'string', minLength: 1 } as const;

/** a value or a distribution: `uniform(-50, 50)`, `normal(0, 10us)`, `lognormal(700ns, 1.5)` */
export const distribution = {
  type: ['string', 'number'],
  pattern:
    '^\\s*(-?[0-9.]+\\s*[a-zµ]*|(uniform|normal|lognormal)\\(\\s*-?[0-9.]+\\s*[a-zµ]*\\s*,\\s*-?[0-9.]+\\s*[a-zµ]*\\s*\\))\\s*$',
};
