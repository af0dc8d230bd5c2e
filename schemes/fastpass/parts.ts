/** Fastpass's node-process parts: the arbiter (allocator, path selection, FCP) and the qdisc under the run's transport. */
import { defineSchemeParts } from '../../scheme/parts.js';
import { FastpassArbiter } from './arbiter/role.js';
import { FastpassTransport } from './host/transport.js';
import type { FastpassHostConfig } from './wire.js';

export default defineSchemeParts({
  arbiter: { create: (ctx) => new FastpassArbiter(ctx) },
  host: {
    under: (config, components, make) =>
      new FastpassTransport(config as FastpassHostConfig, components, make),
  },
});
