// How the generated tables write numbers: the same units and digits everywhere.

/** a duration in ns: ns below 1 µs, µs to 1 decimal below 1 ms, ms to 2 decimals above */
export const ns = (v) =>
  v === null || v === undefined
    ? '-'
    : Math.abs(v) >= 1e6
      ? `${(v / 1e6).toFixed(2)} ms`
      : Math.abs(v) >= 1000
        ? `${(v / 1000).toFixed(1)} µs`
        : `${Math.round(v)} ns`;

/** bytes as KB (1,000 B) to 1 decimal */
export const kb = (v) => `${(v / 1000).toFixed(1)} KB`;

/** an integer with thousands separators */
export const int = (v) => Math.round(v).toLocaleString('en-US');

/** x against base, in percent with its sign: −30.3% */
export const rel = (x, base) => {
  const p = ((x - base) / base) * 100;
  return `${p < 0 ? '−' : '+'}${Math.abs(p).toFixed(1)}%`;
};

/** a share as a percentage to 1 decimal */
export const share = (part, whole) => `${((part / whole) * 100).toFixed(1)}%`;

/** a markdown table from a header and rows of cells */
export function table(header, rows) {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
}

/** the mean of the numbers of a CSV column over the rows kept */
export function mean(rows, column) {
  if (rows.length === 0) return Number.NaN;
  let sum = 0;
  for (const r of rows) sum += Number(r[column]);
  return sum / rows.length;
}

/** a bench figure as the bench prints it: whole numbers grouped, others to 4 significant digits */
export const benchValue = (v) =>
  Number.isInteger(v) ? int(v) : Math.abs(v) >= 100 ? int(Math.round(v)) : String(Number(v.toPrecision(4)));

/** bench.json's figures (`npm run bench -- --out`) as a table: name, value, what it measures */
export function benchTable(figures) {
  return [
    '| figure | value | what it measures (and the goal) |',
    '| --- | --- | --- |',
    ...figures.map(
      (f) =>
        // a results folder the bench left in the temp folder is no place to send a reader
        `| \`${f.name}\` | ${benchValue(f.value)} | ${f.note.replaceAll('|', '\\|').replace(/\/tmp\/dcemu-bench-\w+/g, 'its results folder')} |`,
    ),
  ];
}
