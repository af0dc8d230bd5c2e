/**
 * A small SVG line chart for result folders: one polyline per series, axes with ticks, a legend.
 * `symlog` compresses large values (clock errors start at microseconds and settle at nanoseconds)
 * while keeping sign and a linear region around zero.
 */

export interface ChartSeries {
  name: string;
  x: number[];
  y: number[];
}

const W = 900;
const H = 480;
const M = { l: 80, r: 150, t: 40, b: 50 };
const COLORS = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

export function lineChart(
  series: ChartSeries[],
  o: { title: string; xLabel: string; yLabel: string; symlog?: boolean },
): string {
  const f = o.symlog ? (v: number) => Math.sign(v) * Math.log10(1 + Math.abs(v)) : (v: number) => v;
  let x0 = Number.POSITIVE_INFINITY;
  let x1 = Number.NEGATIVE_INFINITY;
  let y0 = Number.POSITIVE_INFINITY;
  let y1 = Number.NEGATIVE_INFINITY;
  for (const s of series) {
    for (let i = 0; i < s.x.length; i++) {
      x0 = Math.min(x0, s.x[i]);
      x1 = Math.max(x1, s.x[i]);
      const y = f(s.y[i]);
      y0 = Math.min(y0, y);
      y1 = Math.max(y1, y);
    }
  }
  if (!Number.isFinite(x0))
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><text x="20" y="40">no data</text></svg>\n`;
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) y1 = y0 + 1;
  const px = (x: number) => M.l + ((x - x0) / (x1 - x0)) * (W - M.l - M.r);
  const py = (y: number) => H - M.b - ((f(y) - y0) / (y1 - y0)) * (H - M.t - M.b);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15">${esc(o.title)}</text>`,
    `<line x1="${M.l}" y1="${H - M.b}" x2="${W - M.r}" y2="${H - M.b}" stroke="black"/>`,
    `<line x1="${M.l}" y1="${M.t}" x2="${M.l}" y2="${H - M.b}" stroke="black"/>`,
    `<text x="${(M.l + W - M.r) / 2}" y="${H - 12}" text-anchor="middle">${esc(o.xLabel)}</text>`,
    `<text transform="translate(18 ${(M.t + H - M.b) / 2}) rotate(-90)" text-anchor="middle">${esc(o.yLabel)}</text>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const xv = x0 + ((x1 - x0) * i) / 5;
    parts.push(`<text x="${px(xv)}" y="${H - M.b + 16}" text-anchor="middle">${fmt(xv)}</text>`);
  }
  // y ticks at round values in the (possibly symlog) space
  const inv = o.symlog ? (u: number) => Math.sign(u) * (10 ** Math.abs(u) - 1) : (u: number) => u;
  for (let i = 0; i <= 6; i++) {
    const yv = inv(y0 + ((y1 - y0) * i) / 6);
    const y = py(yv);
    parts.push(`<line x1="${M.l - 4}" y1="${y}" x2="${W - M.r}" y2="${y}" stroke="#ddd"/>`);
    parts.push(`<text x="${M.l - 6}" y="${y + 4}" text-anchor="end">${fmt(yv)}</text>`);
  }
  series.forEach((s, k) => {
    const color = COLORS[k % COLORS.length];
    const pts: string[] = [];
    // thin very long series: at most ~2000 points per line
    const step = Math.max(1, Math.floor(s.x.length / 2000));
    for (let i = 0; i < s.x.length; i += step) pts.push(`${px(s.x[i]).toFixed(1)},${py(s.y[i]).toFixed(1)}`);
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1" points="${pts.join(' ')}"/>`);
    const ly = M.t + 14 * k;
    parts.push(
      `<line x1="${W - M.r + 10}" y1="${ly}" x2="${W - M.r + 30}" y2="${ly}" stroke="${color}" stroke-width="2"/>`,
    );
    parts.push(`<text x="${W - M.r + 35}" y="${ly + 4}">${esc(s.name)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function fmt(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e6) return `${(v / 1e6).toFixed(1)}M`;
  if (a >= 1e3) return `${(v / 1e3).toFixed(1)}k`;
  if (a >= 10 || a === 0) return v.toFixed(0);
  return v.toFixed(1);
}
