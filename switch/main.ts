/** Switch process entry: wiring only (STYLE §6). F10 fabrics bring their own failure detector. */
import { runNode } from '../core/node-runtime.js';
import { f10DetectorFactory } from './f10/detector-factory.js';
import { Switch } from './switch.js';

await runNode('switch', (ctx) => new Switch(ctx), f10DetectorFactory);
