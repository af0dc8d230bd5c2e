/**
 * Rendering plots offline: a Vega-Lite spec (data inline) is compiled to Vega, drawn headless by a
 * Vega `View` (`renderer: 'none'`, `toSVG()`), and the SVG is rasterized to PNG by resvg. Each plot
 * leaves three files in `<dir>/`: `<name>.vl.json` (open it in the Vega editor), `<name>.svg` and
 * `<name>.png`. Vega and resvg load on the first plot only (~0.2 s), so commands that draw nothing
 * never pay for them.
 *
 * Fonts: resvg draws no text without a font and a bare machine may have none, so it is handed the
 * DejaVu Sans files of the `dejavu-fonts-ttf` package (a dependency) and never looks at system fonts:
 * the PNG is the same on every machine. The SVG names the generic `sans-serif`, which a browser fills
 * with its own.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { TopLevelSpec } from 'vega-lite';

/** One plot: a file name (no extension) and its Vega-Lite spec with the data inline. */
export interface Plot {
  name: string;
  spec: TopLevelSpec;
}

/** Pixels per SVG unit in the PNG: sharp on high-density screens and in slides. */
export const PNG_SCALE = 2;

/** The DejaVu Sans faces Vega's marks use: regular text, bold titles. */
const FONT_FILES = ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'];

interface Renderer {
  svg(spec: TopLevelSpec): Promise<string>;
  png(svg: string): Promise<Buffer>;
}

let loaded: Promise<Renderer> | null = null;

/** Vega, Vega-Lite and resvg, loaded once per process; a failed load is tried again next time. */
function renderer(): Promise<Renderer> {
  if (loaded === null) {
    loaded = load();
    loaded.catch(() => {
      loaded = null;
    });
  }
  return loaded;
}

async function load(): Promise<Renderer> {
  const [vega, vl, resvg] = await Promise.all([
    import('vega'),
    import('vega-lite'),
    import('@resvg/resvg-js'),
  ]);
  const require = createRequire(import.meta.url);
  const fontDir = join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
  const font = {
    loadSystemFonts: false,
    fontFiles: FONT_FILES.map((f) => join(fontDir, f)),
    defaultFontFamily: 'DejaVu Sans',
    sansSerifFamily: 'DejaVu Sans',
  };
  // the libraries' own warnings (an empty extent, a dropped channel) would land in the CLI's output
  const quiet = vega.logger(vega.None);
  return {
    async svg(spec) {
      const view = new vega.View(vega.parse(vl.compile(spec, { logger: quiet }).spec), {
        renderer: 'none',
        logLevel: vega.None,
      });
      try {
        return await view.toSVG();
      } finally {
        view.finalize();
      }
    },
    async png(svg) {
      const img = await resvg.renderAsync(svg, {
        font,
        fitTo: { mode: 'zoom', value: PNG_SCALE },
        background: 'white',
        logLevel: 'off',
      });
      return img.asPng();
    },
  };
}

/** One spec drawn as SVG text (for pages that inline their charts); throws where Vega cannot draw it. */
export async function svgOf(spec: TopLevelSpec): Promise<string> {
  return (await renderer()).svg(spec);
}

/** What `writePlots` left: the plots drawn, and one line per plot that could not be. */
export interface PlotOutcome {
  written: string[];
  problems: string[];
}

/**
 * Writes every plot into `dir` (created if needed). The spec is written first, so a plot that fails
 * to render still leaves its data; failures are returned as lines, never thrown: plots come after
 * the results, and a run's figures do not depend on them.
 */
export async function writePlots(dir: string, plots: Plot[]): Promise<PlotOutcome> {
  const out: PlotOutcome = { written: [], problems: [] };
  if (plots.length === 0) return out;
  mkdirSync(dir, { recursive: true });
  for (const p of plots) writeFileSync(join(dir, `${p.name}.vl.json`), `${JSON.stringify(p.spec)}\n`);
  let r: Renderer;
  try {
    r = await renderer();
  } catch (err) {
    out.problems.push(
      `plots not drawn (only their .vl.json specs): cannot load Vega or resvg: ${message(err)}`,
    );
    return out;
  }
  // resvg rasterizes on libuv's thread pool: each PNG is drawn while Vega lays out the next SVG
  const pngs: Array<Promise<void>> = [];
  for (const p of plots) {
    const failed = (err: unknown) => {
      out.problems.push(`plot ${p.name} not drawn: ${message(err)}`);
    };
    try {
      const svg = await r.svg(p.spec);
      writeFileSync(join(dir, `${p.name}.svg`), svg);
      pngs.push(
        r.png(svg).then((png) => {
          writeFileSync(join(dir, `${p.name}.png`), png);
          out.written.push(p.name);
        }, failed),
      );
    } catch (err) {
      failed(err);
    }
  }
  await Promise.all(pngs);
  return out;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));
