/** Arbiter process entry: wiring only (STYLE §6). The scheme's arbiter comes from the registry. */
import { runNode } from '../core/node-runtime.js';
import { arbiterDetector, arbiterScheme } from './schemes.js';

await runNode('arbiter', (ctx) => arbiterScheme(ctx.config.scheme?.kind).create(ctx), arbiterDetector);
