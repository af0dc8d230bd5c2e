/**
 * Flowtune's node-process parts: the allocator (NED, F-NORM/U-NORM) and, under the baseline
 * transport, flowlet notifications and rate leases that hold its windows and pace them.
 */
import { defineSchemeParts } from '../../sdk/node.js';
import { FlowtuneAllocator } from './arbiter/role.js';
import { FlowtuneTransport } from './host/transport.js';
import type { FlowtuneHostConfig } from './wire.js';

export default defineSchemeParts({
  arbiter: { create: (ctx) => new FlowtuneAllocator(ctx) },
  host: {
    under: (config, components, make) =>
      new FlowtuneTransport(config as FlowtuneHostConfig, components, make),
  },
});
