/**
 * Transport factory: hosts ask for a transport by kind and never import a variant directly.
 */
import type { TransportConfig } from '../../core/messages.js';
import { BaselineTransport } from './baseline.js';
import type { Transport, TransportComponents } from './types.js';
import { UdpTransport } from './udp.js';

export { BASELINE_DEFAULTS } from './baseline.js';
export type { Transport, TransportComponents } from './types.js';
export { UDP_DEFAULTS } from './udp.js';

export function createTransport(config: TransportConfig, components: TransportComponents): Transport {
  switch (config.kind) {
    case 'baseline':
      return new BaselineTransport(config, components);
    case 'udp':
      return new UdpTransport(config, components);
  }
}
