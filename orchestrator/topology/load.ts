/**
 * Reads a hand-written (or hand-edited) topology: the JSON `dcemu topo --format json` prints. Its shape
 * is checked field by field so a mistake is one line naming the file and the field; then
 * `validateTopology` checks the wiring (and, for an F10 tree, F10 §8's address verification).
 */
import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument } from 'yaml';
import type { Topology } from '../../topology/types.js';
import { ScenarioError } from '../engine/errors.js';
import { lineOfPath, plainData } from '../scenario/load.js';

export function loadTopologyFile(file: string): Topology {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new ScenarioError(file, -1, '', `cannot read topology file (${why})`);
  }
  // JSON is YAML: the yaml parser gives every field its line
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    throw new ScenarioError(file, e.linePos?.[0]?.line ?? 1, '', `not JSON: ${e.message.split('\n')[0]}`);
  }
  const data: unknown = plainData(doc, lc, file);
  const fail = (field: string, problem: string): never => {
    const path = field
      .split(/[.[\]]+/)
      .filter((x) => x !== '')
      .map((x) => (/^\d+$/.test(x) ? Number(x) : x));
    throw new ScenarioError(file, lineOfPath(doc, lc, path), field, problem);
  };
  const t = data as Topology;
  if (typeof t !== 'object' || t === null) fail('', 'expected an object with kind, nodes and links');
  if (typeof t.kind !== 'string') fail('kind', 'expected a string');
  if (!Array.isArray(t.nodes)) fail('nodes', 'expected an array');
  if (!Array.isArray(t.links)) fail('links', 'expected an array');
  for (const [i, n] of t.nodes.entries()) {
    const at = `nodes[${i}]`;
    if (typeof n?.name !== 'string') fail(`${at}.name`, 'expected a string');
    if (!Number.isInteger(n.id)) fail(`${at}.id`, 'expected an integer');
    if (n.role !== 'host' && n.role !== 'switch' && n.role !== 'arbiter')
      fail(`${at}.role`, "expected 'host', 'switch' or 'arbiter'");
    if (!Number.isInteger(n.tier)) fail(`${at}.tier`, 'expected an integer');
    if (!Array.isArray(n.ports)) fail(`${at}.ports`, 'expected an array');
    for (const [j, p] of n.ports.entries()) {
      const pat = `${at}.ports[${j}]`;
      for (const k of ['index', 'peerPort', 'link'] as const)
        if (!Number.isInteger(p?.[k])) fail(`${pat}.${k}`, 'expected an integer');
      if (typeof p.peer !== 'string') fail(`${pat}.peer`, 'expected a string');
      if (p.dir !== 'up' && p.dir !== 'down' && p.dir !== 'control')
        fail(`${pat}.dir`, "expected 'up', 'down' or 'control'");
    }
    if (n.f10 !== undefined) {
      for (const k of ['level', 'location', 'index'] as const)
        if (!Number.isInteger(n.f10?.[k])) fail(`${at}.f10.${k}`, 'expected an integer');
      if (n.f10.type !== 'A' && n.f10.type !== 'B') fail(`${at}.f10.type`, "expected 'A' or 'B'");
    }
  }
  for (const [i, l] of t.links.entries()) {
    const at = `links[${i}]`;
    for (const end of ['a', 'b'] as const) {
      if (typeof l?.[end]?.node !== 'string') fail(`${at}.${end}.node`, 'expected a string');
      if (!Number.isInteger(l[end].port)) fail(`${at}.${end}.port`, 'expected an integer');
    }
    if (!(l.rateBps > 0)) fail(`${at}.rateBps`, 'expected a positive number (bit/s)');
    if (!(l.propNs >= 0)) fail(`${at}.propNs`, 'expected a number >= 0 (ns)');
  }
  if (t.f10 !== undefined) {
    if (!Number.isInteger(t.f10.p) || t.f10.p < 2) fail('f10.p', 'expected an integer >= 2');
    if (!Number.isInteger(t.f10.L) || t.f10.L < 1) fail('f10.L', 'expected an integer >= 1');
    if (t.f10.variant !== 'ab' && t.f10.variant !== 'standard')
      fail('f10.variant', "expected 'ab' or 'standard'");
  }
  return t;
}
