/**
 * ECMP, the best-effort baseline: no arbiter, nothing in the nodes beyond their ECMP tables and the
 * run's transport. A scheme like every other, only with nothing to add.
 */
import { defineScheme } from '../../sdk/index.js';

export default defineScheme({
  kinds: ['ecmp'],
  properties: {},
  resolve: () => ({ kind: 'ecmp' }),
  // the run's own transport carries every flow
  stopsFlows: () => true,
});
