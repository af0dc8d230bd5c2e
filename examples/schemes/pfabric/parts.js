/**
 * pFabric's node-process parts: its port on every switch port and every NIC, and its transport on
 * every host. Loaded by each node process whose config names the scheme (dcemu's `sdk/parts`).
 */
import { defineSchemeParts } from 'dcemu/scheme/node';
import { PFabricQueue } from './queue.js';
import { PFabricTransport } from './transport.js';

/** one process is one node: the counters its ports share, reported by its switch module */
const pushed = { pushedOut: 0, pushedOutBytes: 0 };
const port = () => new PFabricQueue(pushed);

export default defineSchemeParts({
  switch: {
    // routing stays the fabric's ECMP; the module only reports what the ports pushed out
    create: () => ({ report: () => ({ ...pushed }) }),
    discipline: port,
  },
  host: {
    discipline: port,
    // pFabric replaces the run's transport: its own rate control over its own priorities
    transport: (config, components) => new PFabricTransport(config, components, pushed),
  },
});
