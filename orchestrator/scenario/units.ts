/**
 * JSON-schema fragments for values with units, shared by the scenario schema and every scheme's
 * `scheme:` properties: a string with a unit (`10us`, `10Gbps`, `150KB`) or a plain number (ns, bit/s,
 * bytes), never negative. `resolve.ts` and the schemes' resolvers turn them into numbers.
 */
export const duration = {
  type: ['string', 'number'],
  pattern: '^\\s*[0-9]*\\.?[0-9]+(e[-+]?\\d+)?\\s*(ns|us|µs|ms|s)?\\s*$',
  minimum: 0,
};
export const rate = {
  type: ['string', 'number'],
  pattern: '^\\s*[0-9]*\\.?[0-9]+\\s*[kKmMgGtT]?(bps|bit/s|b/s)?\\s*$',
  minimum: 0,
};
export const bytes = {
  type: ['string', 'number'],
  pattern: '^\\s*[0-9]*\\.?[0-9]+\\s*([kKmMgG]i?)?[bB]?\\s*$',
  minimum: 0,
};
