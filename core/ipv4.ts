/** IPv4 addresses as unsigned 32-bit numbers and back (the node binds by subnet; runtimes allocate them). */

/** `a.b.c.d` as an unsigned 32-bit number */
export function ipv4(ip: string): number {
  return ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
}

/** an unsigned 32-bit number as `a.b.c.d` */
export function ipv4String(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}
