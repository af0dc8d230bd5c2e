/** Host process entry: wiring only (docs/conventions.md §6). A scheme may bring a transport, a qdisc, the NIC's discipline and detector. */
import { runNode } from '../core/node-runtime.js';
import { schemePart } from '../core/scheme-parts.js';
import { Host } from './host.js';
import { hostDiscipline } from './qdisc/index.js';
import type { HostPart } from './transport/types.js';

await runNode('host', async (config) => {
  const part = await schemePart<HostPart>(config, 'host');
  // a scheme with a data path of its own on the host (a transport, a layer under the run's, a NIC
  // discipline) is its own host stack: its NIC stays as the scheme has it; otherwise the run's qdisc
  const own = part?.discipline !== undefined || part?.transport !== undefined || part?.under !== undefined;
  return {
    role: (ctx) => new Host(ctx, part),
    detector: part?.detector,
    discipline: own ? part?.discipline : hostDiscipline,
  };
});
