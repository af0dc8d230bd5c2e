/** Host process entry: wiring only (docs/conventions.md §6). A scheme may bring a transport, a qdisc, the NIC's discipline and detector. */
import { runNode } from '../core/node-runtime.js';
import { schemePart } from '../scheme/parts.js';
import { Host } from './host.js';
import { hostDiscipline } from './qdisc/index.js';

await runNode('host', async (config) => {
  const part = await schemePart(config, 'host');
  return { role: (ctx) => new Host(ctx, part), detector: part?.detector, discipline: part?.discipline ?? hostDiscipline };
});
