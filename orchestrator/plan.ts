/**
 * Plans a run: from the resolved scenario and its topology, the configuration of every node process
 * (ports with link and buffer parameters, routing tables, liveness, transport, its own flows) and the
 * complete flow list the orchestrator keeps for accounting.
 */
import type { FlowSpec, NodeConfig, PortConfig } from '../core/messages.js';
import type { Epoch } from '../core/time.js';
import { generateFlows } from '../node/workload.js';
import type { Scenario } from './scenario/resolve.js';
import { routingTable } from './topology/routing.js';

export interface Plan {
  nodes: NodeConfig[];
  flows: FlowSpec[];
}

export function planRun(sc: Scenario, opts: { epoch: Epoch; bindHost: string; logDir: string | null }): Plan {
  const topo = sc.topology;
  const hosts = topo.nodes.filter((n) => n.role === 'host');
  const hostRate = Math.min(...hosts.map((h) => topo.links[h.ports[0].link].rateBps));
  const flows = generateFlows(
    sc.workload,
    hosts.map((h) => h.id),
    hostRate,
  );
  const byName = new Map(topo.nodes.map((n) => [n.name, n]));
  const nodes = topo.nodes.map((n): NodeConfig => {
    const isHost = n.role === 'host';
    const ports = n.ports.map((p): PortConfig => {
      const link = topo.links[p.link];
      return {
        index: p.index,
        peer: p.peer,
        peerId: byName.get(p.peer)!.id,
        peerPort: p.peerPort,
        dir: p.dir,
        rateBps: link.rateBps,
        propNs: link.propNs,
        bufferBytes: isHost ? sc.ports.hostBufferBytes : sc.ports.bufferBytes,
        // hosts do not mark: marking is the switches' job (DCTCP)
        ecnBytes: isHost ? 0 : sc.ports.ecnBytes,
        commitAheadNs: sc.ports.commitAheadNs,
      };
    });
    return {
      name: n.name,
      id: n.id,
      kind: n.role,
      tier: n.tier,
      tdf: sc.tdf,
      epoch: opts.epoch,
      seed: sc.seed * 1000003 + n.id,
      bindHost: opts.bindHost,
      logFile: opts.logDir ? `${opts.logDir}/${n.name}.log` : null,
      logLevel: sc.run.logLevel,
      ports,
      liveness: sc.liveness,
      sampleNs: isHost ? 0 : sc.run.sampleNs,
      ...(isHost
        ? { transport: sc.transport, flows: flows.filter((f) => f.src === n.id) }
        : { routing: routingTable(topo, n.name) }),
    };
  });
  return { nodes, flows };
}
