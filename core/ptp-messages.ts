/**
 * PTP's messages as dcemu carries them in `frame.x` (core/ptp.ts): their bodies, their wire sizes and
 * which of them are event messages, whose time stamps matter.
 */
import type { GmDataset } from './bmca.js';

/** PTP message bodies, carried in `frame.x`. `corr` is the correction field transparent clocks add to. */
export type PtpMessage =
  | { m: 'announce'; gm: GmDataset; steps: number }
  /** peer delay (IEEE 1588 11.4), link-local: request, response with t2, follow-up with t3 */
  | { m: 'pdreq'; seq: number }
  | { m: 'pdresp'; seq: number; t2: number }
  | { m: 'pdfup'; seq: number; t3: number }
  | { m: 'sync'; seq: number; corr: number }
  | { m: 'fup'; seq: number; t1: number; corr: number }
  | { m: 'dreq'; seq: number; corr: number }
  | { m: 'dresp'; seq: number; t4: number; corr: number };

/** Wire sizes: PTPv2 over UDP/IPv4/Ethernet (44-byte Sync + headers; 64-byte Announce + headers). */
export const SIZE = { event: 90, general: 100, announce: 110 } as const;

/** the kind of a PTP message body (`frame.x`), if it is one */
function kind(x: unknown): string | undefined {
  return (x as { m?: string } | null)?.m;
}

/** Sync and Delay_Req: the event messages a transparent clock corrects in transit */
export function isEventMessage(x: unknown): x is { m: 'sync' | 'dreq'; corr: number } {
  const m = kind(x);
  return m === 'sync' || m === 'dreq';
}

/** the peer delay mechanism's messages: link-local, never forwarded */
export function isPeerDelayMessage(x: unknown): boolean {
  const m = kind(x);
  return m === 'pdreq' || m === 'pdresp' || m === 'pdfup';
}

/** event messages of either mechanism: stamped, so software stamps jitter them on send */
export function isStampedMessage(x: unknown): boolean {
  const m = kind(x);
  return m === 'sync' || m === 'dreq' || m === 'pdreq' || m === 'pdresp';
}
