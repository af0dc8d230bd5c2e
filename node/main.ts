/** Host process entry: wiring only (STYLE §6). In an F10 fabric the NIC runs F10's detector. */
import { runNode } from '../core/node-runtime.js';
import { f10DetectorFactory } from '../switch/f10/detector-factory.js';
import { Host } from './host.js';

await runNode('host', (ctx) => new Host(ctx), f10DetectorFactory);
