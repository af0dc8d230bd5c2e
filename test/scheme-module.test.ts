/**
 * A scheme named by module (`scheme: { kind, module }`), as the orchestrator reads it: loaded from
 * the scenario's folder, its settings checked and resolved by its own definition, the same checks
 * for faults injected into a running fabric, and a plain message for a module that is not there.
 * The example pFabric package sits in a temporary project whose `dcemu` links to this checkout.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { schemeDefinition } from '../orchestrator/registry/index.js';
import { parseScenario } from '../orchestrator/scenario/load.js';
import { resolveInjected, resolveScenario } from '../orchestrator/scenario/resolve.js';
import { ROOT, tempOut } from './helpers.js';

const project = tempOut('scheme-module');
for (const f of ['index.js', 'parts.js', 'queue.js', 'transport.js', 'pfabric.yaml', 'package.json'])
  cpSync(join(ROOT, 'examples/schemes/pfabric', f), join(project, f));
mkdirSync(join(project, 'node_modules'));
symlinkSync(ROOT, join(project, 'node_modules/dcemu'));
const FILE = join(project, 'pfabric.yaml');
const TEXT = readFileSync(FILE, 'utf8');

describe('a scheme named by module', () => {
  it('is loaded from the scenario folder, resolved by its own definition and known by its kind', () => {
    const sc = resolveScenario(parseScenario(TEXT, FILE, ['scheme.probeAfter=3']));
    expect(sc.scheme).toEqual({
      kind: 'pfabric',
      rttNs: 17_600,
      rtoNs: 52_800,
      initialWindow: 15,
      probeAfter: 3,
    });
    expect(schemeDefinition('pfabric').parts).toBe(`file://${project}/parts.js`);
  });

  it('checks faults injected into a running fabric against the same schema', () => {
    const src = parseScenario(TEXT, FILE);
    const sc = resolveScenario(src);
    const [ev] = resolveInjected(src, sc.topology, [{ action: 'link-down', link: ['leaf0', 'spine0'] }], 0);
    expect(ev).toMatchObject({ action: 'link-down', link: ['leaf0', 'spine0'] });
  });

  it('names the line of a module that is not there, and of a setting the scheme does not take', () => {
    expect(() => parseScenario(TEXT, FILE, ['scheme.module=./gone.js'])).toThrow(
      /pfabric\.yaml:14: scheme\.module: no such module: \.\/gone\.js/,
    );
    expect(() => parseScenario(TEXT, FILE, ['scheme.probeAfter=0'])).toThrow(/scheme\.probeAfter/);
  });
});
