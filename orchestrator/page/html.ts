/**
 * The pieces every results page is made of: escaping, tables, sections and the page's frame with its
 * stylesheet inlined. A page is one file that opens from disk: no script, font or image is fetched.
 */

/** text for HTML (element content and attribute values alike) */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** a table of rows of cells (already escaped HTML), with its header */
export function table(head: readonly string[], rows: ReadonlyArray<readonly string[]>, cls = ''): string {
  // a table of name/value rows has no header
  const thead = head.every((h) => h === '')
    ? ''
    : `<thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead>`;
  return [
    `<table${cls ? ` class="${cls}"` : ''}>${thead}<tbody>`,
    ...rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`),
    '</tbody></table>',
  ].join('\n');
}

/** a section of the page: its anchor, heading and body (HTML) */
export function section(id: string, title: string, body: string): string {
  return `<section id="${id}"><h2>${esc(title)}</h2>\n${body}\n</section>`;
}

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1180px; padding: 0 16px 48px; color: #1d1d1f; }
header { border-bottom: 1px solid #ddd; margin-bottom: 8px; }
h1 { font-size: 22px; margin: 18px 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #eee; padding-bottom: 4px; }
nav a { margin-right: 12px; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f6f6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.chart svg, svg.topology { max-width: 100%; height: auto; }
.chart { margin: 8px 0 16px; }
.topology line.link { stroke: #9aa; stroke-width: 1.2; }
.topology line.link.hit { stroke: #c62828; stroke-width: 2.5; stroke-dasharray: 6 3; }
.topology g.node rect { stroke: #667; stroke-width: 1; }
.topology g.node.hit rect { stroke: #c62828; stroke-width: 3; }
.topology text { font: 11px system-ui, sans-serif; fill: #222; pointer-events: none; }
.legend span { display: inline-block; margin-right: 14px; }
.legend i { display: inline-block; width: 12px; height: 12px; border: 1px solid #667; margin-right: 4px; vertical-align: -2px; }
.bad { color: #c62828; font-weight: 600; }
.good { color: #2e7d32; }
.muted { color: #777; }
ul.files { columns: 3; }
`;

/** the whole page: title, navigation to its sections, the sections */
export function page(
  title: string,
  subtitle: string,
  sections: ReadonlyArray<{ id: string; title: string; html: string }>,
): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>${esc(title)}</h1>
<p class="muted">${subtitle}</p>
<nav>${sections.map((s) => `<a href="#${s.id}">${esc(s.title)}</a>`).join('')}</nav>
</header>
${sections.map((s) => section(s.id, s.title, s.html)).join('\n')}
</body>
</html>
`;
}
