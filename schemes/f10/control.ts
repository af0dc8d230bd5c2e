/**
 * The messages between an F10 switch and its controller (schemes/f10/arbiter), carried as control frames on
 * the link between them. Switch → controller: failure and recovery reports (F10 §5.3: "failures are
 * immediately reported to a centralized controller"), acknowledgements of reinstalled links (§5.3) and
 * ToR traffic reports (§6.3, MicroTE).
 * Controller → switch: reinstalls, weighted-ECMP weights, scheduled pairs, and the PortLand baseline's
 * route overrides. Both ends check what they receive: a frame that does not parse is not consumed.
 *
 * With a backup controller (F10 §8, `scheme.controller.backup`) a switch has a control link to each
 * controller and reports to both; commands carry the sender's `term` and a switch obeys the highest
 * term it has heard, and says which in its `state` reports (see arbiter/takeover.ts).
 */

/** What a switch tells the controller, on its control link. */
export type F10Report =
  /** the switch's detector declared the link on `port` down / up */
  | { f10: 'down' | 'up'; port: number }
  /** the link on `port` is reinstalled here: local reroutes and pushback blocks gone (F10 §5.3) */
  | { f10: 'reinstalled'; port: number }
  /** bytes sent upward per destination ToR location during the last report period */
  | { f10: 'traffic'; bytes: Array<[number, number]> }
  /**
   * every report period: the ports the switch's detector holds down, so a lost `down` or `up` report
   * is made good (the controller's view of a link follows the last state it heard)
   */
  | {
      f10: 'state';
      down: number[];
      /** with a backup controller: the highest controller term the switch has obeyed */
      term?: number;
      /** with a backup controller: the controllers (by index, arb0 = 0) whose control link the switch's detector holds down */
      ctl?: number[];
    };

/** What the controller sends a switch; `term` as in the file's note (absent: 0, the primary's). */
export type F10Command = F10CommandBody & { term?: number };

type F10CommandBody =
  | { kind: 'reinstall'; port: number }
  | { kind: 'weights'; weights: number[] | null }
  | { kind: 'scheduled'; entries: Array<[number, number, number]> }
  | { kind: 'routes'; routes: Array<[number, number[]]> }
  /**
   * every epoch: the switch's ports whose links the controller uses, so a lost `reinstall` is made
   * good (the switch reinstalls a listed port its detector holds up)
   */
  | { kind: 'installed'; ports: number[] };

const isInt = (v: unknown): v is number => Number.isInteger(v);
const isPort = (v: unknown, ports: number): v is number => isInt(v) && v >= 0 && v < ports;
const isTerm = (v: unknown): v is number => isInt(v) && v >= 0;
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

export function isF10Report(x: unknown, ports: number): x is F10Report {
  const m = x as F10Report | null;
  if (typeof m !== 'object' || m === null) return false;
  if (m.f10 === 'down' || m.f10 === 'up' || m.f10 === 'reinstalled') return isPort(m.port, ports);
  if (m.f10 === 'state')
    return (
      Array.isArray(m.down) &&
      m.down.every((p) => isPort(p, ports)) &&
      (m.term === undefined || isTerm(m.term)) &&
      (m.ctl === undefined || (Array.isArray(m.ctl) && m.ctl.every(isTerm)))
    );
  if (m.f10 === 'traffic')
    return Array.isArray(m.bytes) && m.bytes.every((e) => Array.isArray(e) && isInt(e[0]) && isNumber(e[1]));
  return false;
}

export function isF10Command(x: unknown, ports: number): x is F10Command {
  const c = x as F10Command | null;
  if (typeof c !== 'object' || c === null || (c.term !== undefined && !isTerm(c.term))) return false;
  switch (c.kind) {
    case 'reinstall':
      return isPort(c.port, ports);
    case 'weights':
      return (
        c.weights === null ||
        (Array.isArray(c.weights) && c.weights.length <= ports && c.weights.every(isNumber))
      );
    case 'scheduled':
      return (
        Array.isArray(c.entries) &&
        c.entries.every(
          (e) => Array.isArray(e) && e.length === 3 && isInt(e[0]) && isInt(e[1]) && isPort(e[2], ports),
        )
      );
    case 'installed':
      return Array.isArray(c.ports) && c.ports.every((p) => isPort(p, ports));
    case 'routes':
      return (
        Array.isArray(c.routes) &&
        c.routes.every(
          (e) =>
            Array.isArray(e) && isInt(e[0]) && Array.isArray(e[1]) && e[1].every((p) => isPort(p, ports)),
        )
      );
    default:
      return false;
  }
}
