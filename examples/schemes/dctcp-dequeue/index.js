/**
 * DCTCP with dequeue marking as a dcemu scheme, written only against the public SDK (`dcemu/scheme`):
 * the definition the orchestrator reads. Switch ports mark an ECN-capable frame CE when it leaves the
 * queue with K bytes or more still queued behind it (queue.js), instead of the port's marking on
 * arrival; hosts run the run's DCTCP transport unchanged.
 *
 * scheme:
 *   kind: dctcp-dequeue
 *   module: ./index.js        # this file
 *   k: 30KB                   # marking threshold, bytes behind the departing frame (default 30KB)
 * Turn the port's own marking off: `ports: { ecnThreshold: 0 }`.
 */
import { bytes, defineScheme, sectionsOf, setting } from 'dcemu/scheme';

/**
 * @typedef {{ marked: number, markedBytes: number, ectDequeued: number }} SwitchSection
 * @typedef {{ k: number, switches: number, marked: number, markedBytes: number, ectDequeued: number,
 *   markedShare: number, portMarks: number }} DctcpDequeueSection
 */

export default defineScheme({
  kinds: ['dctcp-dequeue'],
  parts: new URL('./parts.js', import.meta.url).href,
  properties: {
    k: {
      ...bytes,
      description: 'marking threshold: bytes still queued behind a departing frame (default 30KB)',
    },
  },

  resolve(src, _topo, kind) {
    return { kind, k: setting(src, ['k'], 'bytes', 30_000) };
  },

  nodeScheme(s, _topo, node) {
    if (node.role === 'switch') return { kind: s.kind, config: { k: s.k } };
    return undefined;
  },

  summaryKey: 'dctcpdq',
  /** @returns {DctcpDequeueSection} */
  summarize(s, run) {
    const switches = sectionsOf(run, 'switch');
    /** @param {keyof SwitchSection} key */
    const total = (key) =>
      switches.reduce((a, { section }) => a + /** @type {SwitchSection} */ (section)[key], 0);
    const marked = total('marked');
    const ectDequeued = total('ectDequeued');
    return {
      k: /** @type {number} */ (s.k),
      switches: switches.length,
      marked,
      markedBytes: total('markedBytes'),
      ectDequeued,
      markedShare: ectDequeued > 0 ? marked / ectDequeued : 0,
      // what the ports marked themselves on arrival (0 with `ports.ecnThreshold: 0`)
      portMarks: switches.reduce((a, { report }) => a + report.ports.reduce((b, p) => b + p.ecnMarks, 0), 0),
    };
  },

  reportRows(section) {
    const d = /** @type {DctcpDequeueSection} */ (section);
    return [
      ['dequeue marking K', `${d.k} B behind the departing frame`],
      [
        'dequeue marks',
        `${d.marked} of ${d.ectDequeued} ECN-capable frames (${(100 * d.markedShare).toFixed(1)}%) at ${d.switches} switches; ${d.portMarks} marked on arrival`,
      ],
    ];
  },
});
