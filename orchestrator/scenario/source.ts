/**
 * A parsed, schema-valid scenario document and a way to point at its fields: what every part of the
 * resolution (and every scheme's settings) reads. Its own module, so that schemes and the schema can
 * import it without a circle through the loader.
 */
import type { ScenarioError } from '../engine/errors.js';

export interface ScenarioSource {
  file: string;
  data: RawScenario;
  /** line (1-based) of the value at `path`, or of its nearest existing parent */
  lineOf(path: Array<string | number>): number;
  error(path: Array<string | number>, problem: string): ScenarioError;
}

// biome-ignore lint/suspicious/noExplicitAny: raw YAML is checked by the schema, then resolved field by field
export type RawScenario = Record<string, any>;
