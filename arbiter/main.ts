/** Arbiter process entry: wiring only (docs/conventions.md §6). The scheme's arbiter comes from its parts. */
import { runNode } from '../core/node-runtime.js';
import { schemePart } from '../core/scheme-parts.js';
import type { ArbiterPart } from './role.js';

await runNode('arbiter', async (config) => {
  const part = await schemePart<ArbiterPart>(config, 'arbiter');
  if (part === undefined)
    throw new Error(`${config.name}: an arbiter runs a scheme's arbiter part; this node has no scheme`);
  return { role: part.create, detector: part.detector };
});
