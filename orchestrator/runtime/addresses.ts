/**
 * Where the services of a compose fabric live: one deterministic allocation, shared by the compose
 * generator (which writes the `ipv4_address` of every service) and the attached runtime (which tells
 * the nodes their peers' addresses), so both sides agree without talking to each other.
 *
 * Layout of a fabric subnet (network address `base`): `.1` is the bridge's gateway, the orchestrator
 * is `base + 2`, node `i` of the topology (in topology order) is `base + 10 + i`. A /24 holds 244
 * nodes; bigger fabrics get the smallest larger prefix that fits, down to a /16.
 *
 * Compose fabrics take their subnets from 198.19.0.0/16, the upper half of the benchmarking range
 * 198.18.0.0/15 (RFC 2544) that dcemu keeps its container traffic in; the lower half is left to the
 * docker runtime. Which block a project gets is a hash of its id, so two projects rarely collide; when
 * they do, docker says "Pool overlaps" and `--subnet` picks another.
 */
import { createHash } from 'node:crypto';
import { ipv4String } from '../../core/ipv4.js';
import { RuntimeError } from '../engine/errors.js';

/** the range compose subnets come from */
export const COMPOSE_RANGE = '198.19.0.0/16';
/** every container fabric must stay inside the benchmarking range (RFC 2544's 198.18.0.0/15, docs/containers.md) */
const ALLOWED_RANGE = '198.18.0.0/15';
/** the control server's port on the orchestrator service: fixed, since nodes are told it in advance */
export const CONTROL_PORT = 7400;
/** orchestrator at base + 2 (base + 1 is docker's gateway), nodes from base + 10 */
const ORCHESTRATOR_OFFSET = 2;
const FIRST_NODE_OFFSET = 10;

export interface Cidr {
  /** network address as a 32-bit unsigned number */
  base: number;
  prefix: number;
}

export interface FabricAddresses {
  subnet: string;
  orchestrator: string;
  /** node name -> IPv4 address, in topology order */
  nodes: Map<string, string>;
}

export function parseCidr(s: string): Cidr {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(s.trim());
  const octets = m ? m.slice(1, 5).map(Number) : [];
  const prefix = m ? Number(m[5]) : -1;
  if (!m || octets.some((o) => o > 255) || prefix > 30) {
    throw new RuntimeError(`subnet '${s}': expected an IPv4 CIDR such as 198.19.7.0/24`);
  }
  const addr = octets.reduce((a, o) => a * 256 + o, 0);
  const base = addr - (addr % 2 ** (32 - prefix));
  if (base !== addr)
    throw new RuntimeError(`subnet '${s}': host bits set (network address is ${ipv4String(base)})`);
  return { base, prefix };
}

export function formatCidr(c: Cidr): string {
  return `${ipv4String(c.base)}/${c.prefix}`;
}

function size(c: Cidr): number {
  return 2 ** (32 - c.prefix);
}

/** True if `inner` lies entirely inside `outer`. */
function within(inner: Cidr, outer: Cidr): boolean {
  return inner.base >= outer.base && inner.base + size(inner) <= outer.base + size(outer);
}

/** True if `subnet` (a network's, as Docker reports it) lies inside 198.18.0.0/15; false if it is not an IPv4 CIDR. */
export function inAllowedRange(subnet: string): boolean {
  try {
    return within(parseCidr(subnet), parseCidr(ALLOWED_RANGE));
  } catch {
    return false;
  }
}

/** The longest prefix whose subnet holds the orchestrator, `nodes` nodes and the broadcast address. */
export function prefixFor(nodes: number): number {
  for (let prefix = 24; prefix >= 16; prefix--) {
    if (FIRST_NODE_OFFSET + nodes <= 2 ** (32 - prefix) - 1) return prefix;
  }
  throw new RuntimeError(`${nodes} nodes do not fit a /16 compose subnet (at most ${2 ** 16 - 11})`);
}

/** A subnet of COMPOSE_RANGE for a fabric of `nodes` nodes, chosen by a hash of `seed` (the project id). */
export function pickSubnet(nodes: number, seed: string): string {
  const range = parseCidr(COMPOSE_RANGE);
  const prefix = prefixFor(nodes);
  const blocks = 2 ** (prefix - range.prefix);
  const index = createHash('sha256').update(seed).digest().readUInt32BE(0) % blocks;
  return formatCidr({ base: range.base + index * 2 ** (32 - prefix), prefix });
}

/** Addresses of the orchestrator and of every node (in the given order) inside `subnet`. */
export function allocateAddresses(nodes: readonly string[], subnet: string): FabricAddresses {
  const c = parseCidr(subnet);
  if (!within(c, parseCidr(ALLOWED_RANGE))) {
    throw new RuntimeError(
      `subnet ${subnet} is outside ${ALLOWED_RANGE}, where dcemu keeps container traffic`,
    );
  }
  const fits = size(c) - 1 - FIRST_NODE_OFFSET;
  if (nodes.length > fits) {
    throw new RuntimeError(
      `subnet ${subnet} holds ${fits} nodes, the fabric has ${nodes.length}: use a /${prefixFor(nodes.length)} or larger`,
    );
  }
  return {
    subnet: formatCidr(c),
    orchestrator: ipv4String(c.base + ORCHESTRATOR_OFFSET),
    nodes: new Map(nodes.map((name, i) => [name, ipv4String(c.base + FIRST_NODE_OFFSET + i)])),
  };
}
