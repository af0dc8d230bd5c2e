/** Host process entry: wiring only (STYLE §6). */
import { runNode } from '../core/node-runtime.js';
import { Host } from './host.js';

await runNode('host', (ctx) => new Host(ctx));
