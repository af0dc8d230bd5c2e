/**
 * `dcemu schema`: the scenario JSON Schema as a document editors can use. The committed copy
 * (docs/scenario.schema.json) is the one the code has, every example validates against it, and every
 * example points its editor at it.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseScenario } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';
import { scenarioSchemaDocument } from '../orchestrator/scenario/schema.js';
import { ROOT } from './helpers.js';

const examples = [
  ...readdirSync(join(ROOT, 'examples'))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => `examples/${f}`),
  'examples/user-test/f10.yaml',
];

describe('scenario schema', () => {
  it('docs/scenario.schema.json is the schema the code validates with', () => {
    const committed = JSON.parse(readFileSync(join(ROOT, 'docs/scenario.schema.json'), 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(scenarioSchemaDocument())));
  });

  it.each(examples)('%s validates against it and names it for editors', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    expect(text.split('\n')[0]).toMatch(
      /^# yaml-language-server: \$schema=(\.\.\/)+docs\/scenario\.schema\.json$/,
    );
    const validate = new Ajv({ strict: false }).compile(scenarioSchemaDocument());
    expect(validate(parse(text)), JSON.stringify(validate.errors)).toBe(true);
  });

  it('describes every field, and the defaults it states are the ones a run uses', () => {
    type Node = {
      properties?: Record<string, Node>;
      items?: Node;
      additionalProperties?: Node | boolean;
      description?: string;
      default?: unknown;
    };
    const undescribed: string[] = [];
    const defaults: Array<[string[], unknown]> = [];
    const walk = (n: Node, path: string[]): void => {
      for (const [k, v] of Object.entries(n.properties ?? {})) {
        if (!v.description) undescribed.push([...path, k].join('.'));
        if (v.default !== undefined) defaults.push([[...path, k], v.default]);
        walk(v, [...path, k]);
      }
      if (n.items && !Array.isArray(n.items)) walk(n.items, [...path, '*']);
      if (typeof n.additionalProperties === 'object') walk(n.additionalProperties, [...path, '<name>']);
    };
    walk(scenarioSchemaDocument() as Node, []);
    expect(undescribed).toEqual([]);
    // a scenario with every stated default written out resolves as the one that leaves them out
    // (the scheme's, the topology's and per-entry defaults aside: they depend on what is chosen; so do
    // the on-off pattern's, which test/onoff.test.ts checks)
    const base = {
      topology: { kind: 'star', hosts: 3 },
      workload: { pattern: 'all-to-all', fixedSize: '10KB', load: 0.2, deadlines: { mean: '1ms' } },
      clocks: {},
      ptp: { servo: {} },
    };
    const explicit = structuredClone(base) as Record<string, unknown>;
    const skip = /^(scheme|chaos|timeline|topology|invariants)\.|\*|<name>|\.sizes$|^workload\.onOff\./;
    let written = 0;
    for (const [path, value] of defaults) {
      if (skip.test(path.join('.'))) continue;
      let o = explicit;
      for (const k of path.slice(0, -1)) o = (o[k] ??= {}) as Record<string, unknown>;
      o[path[path.length - 1]] = value;
      written++;
    }
    expect(written).toBeGreaterThan(40);
    const resolved = (data: object) => {
      const r = resolveScenario(parseScenario(JSON.stringify(data), 'd.yaml'));
      return { ...r, name: 'd' };
    };
    expect(resolved(explicit)).toEqual(resolved(base));
  });

  it('rejects what the loader rejects: an unknown field', () => {
    const validate = new Ajv({ strict: false }).compile(scenarioSchemaDocument());
    expect(
      validate({ topology: { kind: 'star', hosts: 2 }, workload: { pattern: 'all-to-all' }, tfd: 3 }),
    ).toBe(false);
  });
});
