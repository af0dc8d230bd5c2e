/**
 * The live view of a running fabric (`dcemu run --ui`): a page served on 127.0.0.1, at a path that
 * carries a random token (another local user or a web page in the same browser cannot drive the run
 * without it), showing the run's progress in virtual time and its rate, flows done, and its events as
 * they happen; in conservative mode it pauses the fabric at a barrier, resumes it, and steps it to a
 * virtual time. It injects a fault (kill, pause and resume, link down and up, loss) exactly as a
 * timeline entry would: the entry joins the run's timeline, so scenario.json and events.jsonl hold it
 * and the run can be replayed from its files.
 *
 * Holding a conservative fabric changes when its nodes compute, never what: a run paused and stepped
 * gives the same bytes as one that was not. Closing the page does nothing to the run; the server stops
 * with it. The page's script only polls `state` and posts the controls: it fetches nothing else.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatNs, parseDurationNs } from '../../core/time.js';
import type { StartedEngine } from '../engine/engine.js';
import type { Progress } from '../engine/progress.js';
import type { ScenarioSource } from '../scenario/source.js';
import { resolveInjected } from '../scenario/timeline.js';
import { esc } from './html.js';

/** What the live view drives: the running engine, seen through what it offers a view. */
export interface LiveTarget {
  scenario: string;
  sync: string;
  /** the run's progress (virtual time, flows, faults) */
  progress(): Progress;
  /** its events so far */
  readonly events: ReadonlyArray<{ t: number; kind: string; node?: string; [k: string]: unknown }>;
  /** conservative mode: hold at the first barrier at or after `atNs`, or nowhere */
  hold(atNs: number | null): void;
  /** the barrier it is held at, or null while it runs */
  held(): number | null;
  /** the busiest switch egress queues now */
  queues(): Array<{ port: string; bytes: number }>;
  /** timeline entries injected now (`at` absent) or at a later time; throws a user error on a bad one */
  inject(entries: Array<Record<string, unknown>>): void;
}

/** A started fabric as its live view drives it (the command's `--ui` and the library's `liveView`). */
export function liveTargetOf(fabric: StartedEngine, source: ScenarioSource): LiveTarget {
  return {
    scenario: fabric.scenario.name,
    sync: fabric.scenario.sync,
    progress: () => fabric.progress(),
    events: fabric.events,
    hold: (t) => fabric.hold(t),
    held: () => fabric.held(),
    queues: () => fabric.queuesNow(),
    inject: (entries) =>
      fabric.inject(resolveInjected(source, fabric.scenario.topology, entries, fabric.now())),
  };
}

export interface LiveView {
  url: string;
  close(): Promise<void>;
}

/** events sent to the page per poll (the newest) */
const EVENTS_SHOWN = 200;

function json(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 64 * 1024) throw new Error('request too large');
  }
  if (text.trim() === '') return {};
  const v = JSON.parse(text) as unknown;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('expected a JSON object');
  return v as Record<string, unknown>;
}

/** a time from the page: ns as a number, or a duration ("1.5ms", "200us") */
export function parseTime(v: unknown): number {
  if (typeof v !== 'number' && typeof v !== 'string')
    throw new RangeError(`expected a time such as 1.5ms, got ${JSON.stringify(v)}`);
  return Math.round(parseDurationNs(v));
}

/** Serves the live view of `target` on 127.0.0.1 (`port` 0: any free one). */
export async function startLiveView(
  target: LiveTarget,
  port = 0,
  log: (line: string) => void = () => {},
): Promise<LiveView> {
  const token = randomBytes(12).toString('hex');
  const base = `/${token}/`;
  let wall0 = performance.now();
  let virtual0 = 0;
  const server: Server = createServer(async (req, res) => {
    try {
      const path = (req.url ?? '').split('?')[0];
      if (!path.startsWith(base)) return json(res, 404, { error: 'not found' });
      const route = path.slice(base.length);
      if (req.method === 'GET' && route === '') {
        res.writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy':
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'",
        });
        return res.end(livePage(target));
      }
      if (req.method === 'GET' && route === 'state') {
        const p = target.progress();
        const now = performance.now();
        const rate = now > wall0 ? (p.virtualNs - virtual0) / ((now - wall0) / 1000) : 0;
        const held = target.held();
        if (held !== null) {
          wall0 = now;
          virtual0 = p.virtualNs;
        }
        return json(res, 200, {
          ...p,
          held,
          sync: target.sync,
          rateNsPerS: Math.max(0, rate),
          queues: target.queues(),
          events: target.events.slice(-EVENTS_SHOWN),
          eventCount: target.events.length,
        });
      }
      if (req.method !== 'POST') return json(res, 405, { error: 'GET or POST' });
      const [code, answer] = control(target, route, await body(req), log);
      return json(res, code, answer);
    } catch (err) {
      return json(res, 400, { error: err instanceof Error ? err.message : String(err) });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}${base}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A control the page posted (pause, resume, step, inject) carried out: the answer's status and body. */
function control(
  target: LiveTarget,
  route: string,
  b: Record<string, unknown>,
  log: (line: string) => void,
): [number, unknown] {
  switch (route) {
    case 'pause':
      target.hold(b.at === undefined ? target.progress().virtualNs : parseTime(b.at));
      log(`live view: pause${b.at === undefined ? '' : ` at ${formatNs(parseTime(b.at))}`}`);
      return [200, { ok: true }];
    case 'resume':
      target.hold(null);
      log('live view: resume');
      return [200, { ok: true }];
    case 'step': {
      const to = parseTime(b.to);
      target.hold(to);
      log(`live view: step to ${formatNs(to)}`);
      return [200, { ok: true }];
    }
    case 'inject': {
      // one entry, or several that belong together (a pause and its resume)
      const list = Array.isArray(b.entries) ? b.entries : [b.entry];
      if (list.some((e) => typeof e !== 'object' || e === null || Array.isArray(e)))
        return [400, { error: 'expected {"entry": {action, node | link, ...}} or {"entries": [...]}' }];
      // "now": where the fabric is held, or the virtual time it reached; `after`: that long after now
      const now = target.held() ?? target.progress().virtualNs;
      const entries = (list as Array<Record<string, unknown>>).map(({ after, ...e }) => ({
        ...e,
        at: e.at !== undefined ? parseTime(e.at) : now + (after === undefined ? 0 : parseTime(after)),
      }));
      target.inject(entries);
      log(`live view: injected ${JSON.stringify(entries)}`);
      return [200, { ok: true, entries }];
    }
    default:
      return [404, { error: `no control '${route}'` }];
  }
}

/** The live page's script: it polls `state` and posts the controls. */
const LIVE_SCRIPT = `const fmt = (ns) => ns >= 1e6 ? (ns / 1e6).toFixed(3) + ' ms' : ns >= 1e3 ? (ns / 1e3).toFixed(2) + ' µs' : ns + ' ns';
const $ = (id) => document.getElementById(id);
async function post(route, body) {
  const r = await fetch(route, { method: 'POST', body: JSON.stringify(body ?? {}) });
  const j = await r.json();
  $('error').textContent = r.ok ? '' : j.error;
}
function cell(text) { const td = document.createElement('td'); td.textContent = text; return td; }
async function poll() {
  try {
    const s = await (await fetch('state')).json();
    const held = s.held !== null ? ' — PAUSED at ' + fmt(s.held) : '';
    $('status').className = s.held !== null ? 'held' : '';
    $('status').textContent = 'virtual ' + fmt(s.virtualNs) + ' of ' + fmt(s.endNs) + ' · ' + (s.rateNsPerS / 1000).toFixed(0) + ' µs/s · flows ' + s.flowsDone + '/' + s.flowsTotal + ' done · faults ' + s.faultsFired + '/' + s.faultsTotal + held;
    $('status').dataset.held = s.held === null ? '' : String(s.held);
    const qb = $('queues'); qb.textContent = '';
    for (const q of s.queues) { const tr = document.createElement('tr'); tr.append(cell(q.port), cell(String(q.bytes))); qb.append(tr); }
    if (s.queues.length === 0) { const tr = document.createElement('tr'); tr.append(cell('no queue holds a byte'), cell('')); qb.append(tr); }
    const tb = $('events'); tb.textContent = '';
    for (const e of s.events) {
      const tr = document.createElement('tr');
      const { t, kind, node, ...rest } = e;
      tr.append(cell(fmt(t)), cell(kind), cell(node ?? ''), cell(Object.entries(rest).map(([k, v]) => k + ' ' + JSON.stringify(v)).join(', ')));
      tb.append(tr);
    }
  } catch { $('status').textContent = 'the run has ended (or the view is gone): its results are in its folder'; return; }
  setTimeout(poll, 400);
}
if ($('pause')) {
  $('pause').onclick = () => post('pause');
  $('resume').onclick = () => post('resume');
  $('step').onclick = () => post('step', { to: $('to').value });
}
$('inject').onclick = () => {
  const action = $('action').value;
  const entry = { action };
  if (action.startsWith('link')) entry.link = [$('a').value, $('b').value]; else entry.node = $('node').value;
  if (action === 'link-lossy') entry.loss = Number($('loss').value);
  // a pause comes with its resume
  post('inject', action === 'pause' ? { entries: [entry, { action: 'resume', node: entry.node, after: $('for').value }] } : { entry });
};
poll();
`;

function livePage(t: LiveTarget): string {
  const conservative = t.sync === 'conservative';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dcemu live: ${esc(t.scenario)}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 0 16px 40px; }
h1 { font-size: 20px; } .muted { color: #777; } .held { color: #c62828; font-weight: 600; }
table { border-collapse: collapse; } th, td { border: 1px solid #ddd; padding: 2px 8px; text-align: left; }
fieldset { margin: 10px 0; border: 1px solid #ddd; } input, select, button { font: inherit; margin-right: 6px; }
#error { color: #c62828; }
</style></head><body>
<h1>dcemu live: ${esc(t.scenario)}</h1>
<p id="status">connecting …</p>
<fieldset><legend>time</legend>
${
  conservative
    ? `<button id="pause">Pause</button><button id="resume">Resume</button>
<label>step to <input id="to" size="10" value="1ms"></label><button id="step">Step</button>`
    : '<span class="muted">dilated time runs on the wall clock: it cannot be paused or stepped</span>'
}
</fieldset>
<fieldset><legend>inject a fault now</legend>
<select id="action"><option>link-down</option><option>link-up</option><option>link-lossy</option><option>kill</option><option>pause</option></select>
<label>node <input id="node" size="10"></label>
<label>link <input id="a" size="8"> – <input id="b" size="8"></label>
<label>loss <input id="loss" size="5" value="0.1"></label>
<label>pause for <input id="for" size="7" value="200us"></label>
<button id="inject">Inject</button>
</fieldset>
<p id="error"></p>
<h2>Queues now</h2>
<table><thead><tr><th>egress port</th><th>bytes</th></tr></thead><tbody id="queues"></tbody></table>
<h2>Events</h2>
<table><thead><tr><th>time</th><th>event</th><th>node</th><th>details</th></tr></thead><tbody id="events"></tbody></table>
<script>
${LIVE_SCRIPT}</script>
</body></html>
`;
}
