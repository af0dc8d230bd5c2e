/**
 * Topologies are plain data (docs/conventions.md §7): nodes, their ports and the links between them. Builders in
 * this folder produce them; the same data feeds the process runtime, containers, compose files and
 * `dcemu topo`. Names are derivable: hosts `h0..`, switches `leaf0`, `spine1`, `edge3`, `agg2`,
 * `core0`, `sw0`; a port is `node:index`.
 */

import type { NodeKind, PortDir } from '../core/messages.js';
import type { F10Address, F10Shape } from './f10-address.js';

export type NodeRole = NodeKind;

export interface TopoPort {
  index: number;
  /** name of the node at the other end */
  peer: string;
  /** index of the port at the other end */
  peerPort: number;
  /**
   * 'up' points toward the core (a host's NIC is 'up'), 'down' toward hosts; 'control' joins a switch
   * and an arbiter (a scheme's central controller), never routed through
   */
  dir: PortDir;
  /** link index in `Topology.links` */
  link: number;
}

export interface TopoNode {
  name: string;
  /** dense id: hosts get 0..H-1 in order, switches follow, then arbiters */
  id: number;
  role: NodeRole;
  /** 0 = host, 1 = leaf/edge/ToR, 2 = spine/aggregation, 3 = core */
  tier: number;
  /** FatTree pod, when the builder has pods */
  pod?: number;
  /** F10 address (level, location, index, subtree type), on switches of an F10 tree */
  f10?: F10Address;
  ports: TopoPort[];
}

export interface LinkParams {
  /** bit/s, virtual */
  rateBps: number;
  /** propagation delay, virtual ns */
  propNs: number;
}

export interface TopoLink extends LinkParams {
  a: { node: string; port: number };
  b: { node: string; port: number };
}

export interface Topology {
  /** builder that made it: 'leaf-spine' | 'fat-tree' | 'dumbbell' | 'star' */
  kind: string;
  /** the F10 tree's shape, when the builder made one (standard or AB FatTree with F10 addresses) */
  f10?: F10Shape;
  nodes: TopoNode[];
  links: TopoLink[];
}
