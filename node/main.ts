/** Host process entry: wiring only (STYLE §6). A scheme may bring the NIC's failure detector. */
import { runNode } from '../core/node-runtime.js';
import { Host } from './host.js';
import { hostDetector, hostDiscipline } from './schemes.js';

await runNode('host', (ctx) => new Host(ctx), hostDetector, hostDiscipline);
