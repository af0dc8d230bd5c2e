/**
 * Who may speak on a run's control channel (docs/security.md). Each run draws a secret from the
 * operating system's CSPRNG; a node holds only a key derived from it and its own name, and proves it on
 * connecting with an HMAC over a fresh challenge from the orchestrator, so a recorded hello cannot be
 * replayed and one node's key does not speak for another. The run's datagrams carry a tag derived from
 * the same secret: a datagram of another run, or a stranger's, is dropped and counted.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** the node's key, hex (the process runtime: in the node's environment, read once and removed) */
export const KEY_ENV = 'DCEMU_KEY';
/** a file holding the run's secret, hex (containers: a mounted file or a Docker secret) */
export const SECRET_FILE_ENV = 'DCEMU_SECRET_FILE';

/** bytes of a run's secret, a challenge and a proof */
export const SECRET_BYTES = 32;

export function newSecret(): Buffer {
  return randomBytes(SECRET_BYTES);
}

export function newChallenge(): Buffer {
  return randomBytes(SECRET_BYTES);
}

/** node `name`'s key in the run of `secret` */
export function nodeKey(secret: Buffer, name: string): Buffer {
  return createHmac('sha256', secret).update(`dcemu node key\0${name}`).digest();
}

/** the environment entry that gives node `name` its key (a process of the process runtime) */
export function keyEnv(secret: Buffer, name: string): Record<string, string> {
  return { [KEY_ENV]: nodeKey(secret, name).toString('hex') };
}

/** what node `name` answers to `challenge` */
export function proof(key: Buffer, challenge: Buffer, name: string): Buffer {
  return createHmac('sha256', key).update(challenge).update(`\0${name}`).digest();
}

/** whether `given` is node `name`'s answer to `challenge` (in constant time) */
export function proves(key: Buffer, challenge: Buffer, name: string, given: unknown): boolean {
  if (!(given instanceof Uint8Array) || given.length !== SECRET_BYTES) return false;
  return timingSafeEqual(proof(key, challenge, name), given);
}

/**
 * The run's datagram tag: 32 bits with the top one set, so it always encodes in the same five bytes
 * (a datagram's size does not depend on the run's secret). Not an authenticator: it tells runs apart
 * beside the peer-socket rule.
 */
export function datagramTag(secret: Buffer): number {
  const h = createHmac('sha256', secret).update('dcemu datagram tag').digest();
  return (h.readUInt32BE(0) | 0x80000000) >>> 0;
}

/** a secret as it travels in a file: hex, one line (parseSecret reads it back) */
export function formatSecret(secret: Buffer): string {
  return `${secret.toString('hex')}\n`;
}

/** a secret from its file's text (formatSecret), or null when the text is not one */
export function parseSecret(text: string): Buffer | null {
  const hex = text.trim();
  return /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : null;
}
