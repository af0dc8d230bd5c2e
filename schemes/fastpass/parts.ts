/**
 * Fastpass's node-process parts: the arbiter (allocator, path selection, FCP), the qdisc under the
 * run's transport, and in message mode the switches' queueing stamp.
 */
import { defineSchemeParts } from '../../sdk/node.js';
import { FastpassArbiter } from './arbiter/role.js';
import { FastpassTransport } from './host/transport.js';
import { QueueingStamp } from './switch/stamp.js';
import type { FastpassHostConfig } from './wire.js';

export default defineSchemeParts({
  arbiter: { create: (ctx) => new FastpassArbiter(ctx) },
  switch: { create: (ctx) => new QueueingStamp(() => ctx.sched.current) },
  host: {
    under: (config, components, make) =>
      new FastpassTransport(config as FastpassHostConfig, components, make),
    // the Fastpass qdisc is the host's qdisc (§6: it "queues outgoing packets before sending them to the NIC driver")
    replacesQdisc: true,
  },
});
