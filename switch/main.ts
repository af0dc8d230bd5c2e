/** Switch process entry: wiring only (STYLE §6). */
import { runNode } from '../core/node-runtime.js';
import { Switch } from './switch.js';

await runNode('switch', (ctx) => new Switch(ctx));
