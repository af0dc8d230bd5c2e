/** Switch process entry: wiring only (docs/conventions.md §6). The scheme's module, detector and disciplines come from its parts. */
import { runNode } from '../core/node-runtime.js';
import { schemePart } from '../core/scheme-parts.js';
import type { SwitchPart } from './scheme.js';
import { Switch } from './switch.js';

await runNode('switch', async (config) => {
  const part = await schemePart<SwitchPart>(config, 'switch');
  return {
    role: (ctx) => new Switch(ctx, part?.create ?? null),
    detector: part?.detector,
    discipline: part?.discipline,
  };
});
