/**
 * DCTCP-dequeue's node-process parts: a dequeue-marking port on every switch port, and a switch module
 * that only reports what its ports marked. Hosts run the run's transport (DCTCP) unchanged, so the
 * scheme gives them nothing.
 */
import { defineSchemeParts } from 'dcemu/scheme/node';
import { DequeueMarkingQueue } from './queue.js';

/** one process is one node: the counters its ports share, reported by its switch module */
const counts = { marked: 0, markedBytes: 0, ectDequeued: 0 };

export default defineSchemeParts({
  switch: {
    // routing stays the fabric's up/down ECMP
    create: () => ({ report: () => ({ ...counts }) }),
    discipline: (config) => {
      // what the definition's nodeScheme gave this switch (every switch of the run gets its K)
      const k = /** @type {{ k?: number } | undefined} */ (config.scheme?.config)?.k;
      return new DequeueMarkingQueue(k ?? Number.POSITIVE_INFINITY, counts);
    },
  },
});
