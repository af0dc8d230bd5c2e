/** Switch process entry: wiring only (STYLE §6). The scheme (and its failure detector) comes from the registry. */
import { runNode } from '../core/node-runtime.js';
import { switchDetector, switchDiscipline, switchScheme } from './schemes.js';
import { Switch } from './switch.js';

await runNode(
  'switch',
  (ctx) => {
    const kind = ctx.config.scheme?.kind;
    return new Switch(ctx, kind === undefined ? null : switchScheme(kind).create);
  },
  switchDetector,
  switchDiscipline,
);
