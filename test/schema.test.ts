/**
 * `dcemu schema`: the scenario JSON Schema as a document editors can use. The committed copy
 * (docs/scenario.schema.json) is the one the code has, every example validates against it, and every
 * example points its editor at it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
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

  it('rejects what the loader rejects: an unknown field', () => {
    const validate = new Ajv({ strict: false }).compile(scenarioSchemaDocument());
    expect(
      validate({ topology: { kind: 'star', hosts: 2 }, workload: { pattern: 'all-to-all' }, tfd: 3 }),
    ).toBe(false);
  });
});
