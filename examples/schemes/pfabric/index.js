/**
 * pFabric (Alizadeh et al., "pFabric: Minimal Near-Optimal Datacenter Transport", SIGCOMM'13) as a
 * dcemu scheme written only against the public SDK (`dcemu/scheme`): the definition the orchestrator
 * reads. Flow scheduling is in the packets and the ports (queue.js): each packet carries its flow's
 * remaining size, and every port dequeues the most urgent flow's earliest packet and drops the least
 * urgent. Rate control is minimal (transport.js): line-rate start, fixed small timeouts, probe mode.
 *
 * scheme:
 *   kind: pfabric
 *   module: ./index.js        # this file
 *   rto: 45us                 # retransmission timeout (default: 3x the fabric's round trip)
 *   initialWindow: 12         # packets (default: the bandwidth-delay product)
 *   probeAfter: 5             # consecutive timeouts before probe mode
 * Ports should be shallow, as in the paper (about 2x BDP): `ports: { buffer: 36KB }`.
 */
import { baseRttNs, defineScheme, formatNs, parseDurationNs, WireSize } from 'dcemu/scheme';

export default defineScheme({
  kinds: ['pfabric'],
  parts: new URL('./parts.js', import.meta.url).href,
  properties: {
    rto: {
      type: ['string', 'number'],
      description: 'retransmission timeout, fixed (default: 3x the fabric round trip, as in §4.2)',
    },
    initialWindow: {
      type: 'integer',
      minimum: 1,
      description: 'window a flow starts with, packets (default: the bandwidth-delay product: line rate)',
    },
    probeAfter: {
      type: 'integer',
      minimum: 1,
      description: 'consecutive timeouts after which a flow only probes (default 5)',
    },
  },

  resolve(src, topo, kind) {
    const s = src.data.scheme ?? {};
    // the longest unloaded round trip between two hosts (the paper's fabric: 14.6 µs)
    const rttNs = baseRttNs(topo);
    let rtoNs = 3 * rttNs;
    if (s.rto !== undefined) {
      try {
        rtoNs = parseDurationNs(s.rto);
      } catch (err) {
        throw src.error(['scheme', 'rto'], err.message);
      }
      if (!(rtoNs > 0)) throw src.error(['scheme', 'rto'], 'must be positive');
    }
    const host = topo.nodes.find((n) => n.role === 'host');
    const rateBps = host ? topo.links[host.ports[0].link].rateBps : 10e9;
    const bdpPackets = Math.max(1, Math.ceil((rttNs * rateBps) / 8e9 / WireSize.Mtu));
    return {
      kind,
      rttNs,
      rtoNs,
      initialWindow: s.initialWindow ?? bdpPackets,
      probeAfter: s.probeAfter ?? 5,
    };
  },

  nodeScheme(s, _topo, node) {
    if (node.role === 'host')
      return {
        kind: s.kind,
        config: { rtoNs: s.rtoNs, initialWindow: s.initialWindow, probeAfter: s.probeAfter },
      };
    if (node.role === 'switch') return { kind: s.kind, config: {} };
    return undefined;
  },

  summaryKey: 'pfabric',
  summarize(s, r) {
    // hosts report their transport's counters and their NIC's, switches their ports'
    const sum = (key) => r.reports.reduce((a, rep) => a + (rep.scheme?.[key] ?? 0), 0);
    return {
      rttNs: s.rttNs,
      rtoNs: s.rtoNs,
      initialWindow: s.initialWindow,
      probeAfter: s.probeAfter,
      timeouts: sum('timeouts'),
      retransmits: sum('retransmits'),
      probeEntries: sum('probeEntries'),
      probes: sum('probes'),
      pushedOut: sum('pushedOut'),
      pushedOutBytes: sum('pushedOutBytes'),
    };
  },

  reportRows(section) {
    const p = section;
    return [
      [
        'pFabric rto / window',
        `${formatNs(p.rtoNs)} / ${p.initialWindow} packets (fabric RTT ${formatNs(p.rttNs)})`,
      ],
      [
        'pFabric timeouts / probes',
        `${p.timeouts} timeouts, ${p.probeEntries} flows in probe mode, ${p.pushedOut} packets pushed out`,
      ],
    ];
  },
});
