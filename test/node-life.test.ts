/**
 * A node's life in a run (orchestrator/engine/node-life.ts): the moves between its states, what each
 * state lets the engine do, and why a node without a report has none. No process runs here.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import {
  canRestart,
  exit,
  holdsBack,
  isLive,
  kill,
  type Life,
  LifeError,
  noReport,
  pause,
  ready,
  relinked,
  restart,
  stop,
  takesGrants,
  wake,
} from '../orchestrator/engine/node-life.js';

const starting: Life = { is: 'starting' };
const running: Life = { is: 'running' };

describe('node life: moves', () => {
  it('a node starts, runs, and exits at the run end', () => {
    const up = ready(starting);
    expect(up).toEqual(running);
    expect(exit(up, true, 'signal SIGTERM')).toEqual({ is: 'exited' });
  });

  it('an exit while the run goes on is a crash; during start-up it ends the start-up instead', () => {
    expect(exit(running, false, 'exit code 1')).toEqual({ is: 'crashed', why: 'exit code 1' });
    expect(exit({ is: 'paused', until: 5 }, false, 'signal SIGKILL')).toEqual({
      is: 'crashed',
      why: 'signal SIGKILL',
    });
    expect(exit(starting, false, 'exit code 1')).toEqual({ is: 'exited' });
  });

  it('the exits the timeline planned are no crash', () => {
    expect(exit(kill(running), false, 'signal SIGKILL')).toEqual({ is: 'killed' });
    expect(exit(stop(running), false, 'signal SIGTERM')).toEqual({
      is: 'stopped',
      gone: true,
      stopping: null,
    });
    expect(exit(restart(stop(running)), false, 'exit code 0')).toEqual({ is: 'restarting' });
    // a second exit keeps the first one's verdict
    const crashed = exit(running, false, 'exit code 1');
    expect(exit(crashed, false, 'exit code 2')).toBe(crashed);
  });

  it('a stop then start: dilated, the new process runs once ready', () => {
    const back = ready(restart(exit(stop(running), false, 'signal SIGTERM')));
    expect(back).toEqual(running);
  });

  it('a stop then start: conservative, the new process runs once every peer relinked', () => {
    let life = ready(restart(stop(running)), 3);
    expect(life).toEqual({ is: 'relinking', pending: 3 });
    life = relinked(life);
    life = relinked(life);
    expect(life).toEqual({ is: 'relinking', pending: 1 });
    expect(relinked(life)).toEqual(running);
  });

  it('a crashed or killed node can be started again (its container is still there); a live one cannot', () => {
    const crashed = exit(running, false, 'exit code 1');
    expect(canRestart(crashed)).toBe(true);
    expect(restart(crashed)).toEqual({ is: 'restarting' });
    expect(restart(kill(running))).toEqual({ is: 'restarting' });
    for (const life of [starting, running, { is: 'paused', until: 1 } as Life, { is: 'restarting' } as Life])
      expect(canRestart(life), life.is).toBe(false);
  });

  it('a pause stops the process until the grant passes its end', () => {
    const paused = pause(running, 7000);
    expect(paused).toEqual({ is: 'paused', until: 7000 });
    expect(wake(paused)).toEqual(running);
  });

  it('a stop keeps whether the process is already gone', () => {
    expect(stop(exit(running, false, 'x'))).toMatchObject({ is: 'stopped', gone: true });
    expect(stop(running)).toMatchObject({ is: 'stopped', gone: false });
  });

  it('moves a state does not allow throw, naming both', () => {
    expect(() => ready(running)).toThrow(LifeError);
    expect(() => ready(running)).toThrow('node life: ready from running');
    expect(() => relinked(running)).toThrow('relinked from running');
    expect(() => pause(kill(running), 5)).toThrow('pause from killed');
    expect(() => wake(running)).toThrow('wake from running');
    expect(() => restart(running)).toThrow('restart from running');
    expect(() => kill({ is: 'exited' })).toThrow('kill from exited');
    expect(() => stop({ is: 'exited' })).toThrow('stop from exited');
  });
});

describe('node life: what each state allows', () => {
  const all: Life[] = [
    starting,
    running,
    { is: 'paused', until: 100 },
    { is: 'killed' },
    { is: 'stopped', gone: false, stopping: null },
    { is: 'stopped', gone: true, stopping: null },
    { is: 'restarting' },
    { is: 'relinking', pending: 2 },
    { is: 'crashed', why: 'x' },
    { is: 'exited' },
  ];
  const label = (l: Life): string => (l.is === 'stopped' ? `stopped${l.gone ? '+gone' : ''}` : l.is);

  it('live: a process to talk to, that the timeline has not ended', () => {
    expect(all.filter(isLive).map(label)).toEqual(['starting', 'running', 'paused', 'stopped', 'relinking']);
  });

  it('grants go to running and paused nodes only (and those starting, before traffic)', () => {
    expect(all.filter(takesGrants).map(label)).toEqual(['starting', 'running', 'paused']);
  });

  it('holding the fabric back: a node taking grants that has not reached the grant and is not paused over it', () => {
    expect(holdsBack(running, 900, 1000)).toBe(true);
    expect(holdsBack(running, 1000, 1000)).toBe(false);
    expect(holdsBack({ is: 'paused', until: 1000 }, 0, 1000)).toBe(false);
    expect(holdsBack({ is: 'paused', until: 999 }, 0, 1000)).toBe(true);
    for (const life of all.filter((l) => !takesGrants(l))) expect(holdsBack(life, 0, 1000)).toBe(false);
  });

  it('why a node has no report', () => {
    const conn = {} as never;
    const reasons = all.map((life) => noReport({ life, conn }, false));
    expect(reasons).toEqual([
      'no report',
      'no report',
      'no report',
      'killed by the timeline',
      'stopped by the timeline',
      'stopped by the timeline',
      'stopped by the timeline',
      'no report',
      'crashed (x)',
      'exited early',
    ]);
    expect(noReport({ life: starting, conn: null }, true)).toBe('not started: the start-up was interrupted');
    expect(noReport({ life: starting, conn }, true)).toBe(
      'stopped while starting: the start-up was interrupted',
    );
    expect(noReport({ life: { is: 'exited' }, conn: null }, true)).toBe(
      'stopped while starting: the start-up was interrupted',
    );
  });
});
