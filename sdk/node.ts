/**
 * The SDK's node side (`dcemu/scheme/node`, and all of it again in `dcemu/scheme`): what a scheme's
 * parts use inside node processes — its switch module, host transport or qdisc, arbiter role, port
 * disciplines and link failure detectors — and what its shared files (wire formats, configs) use.
 * It imports nothing of the orchestrator, so a node process's bundle carries none of it
 * (.dependency-cruiser.cjs: a scheme's node-side code imports only this module and its own folder).
 */

export { ArbiterRole } from '../arbiter/role.js';
// time: the node's clock, its scheduler, units
export type { NodeClock } from '../core/clock.js';
// egress queues and link liveness
export type { Discipline } from '../core/discipline.js';
export { FrameFifo, StrictPriority } from '../core/discipline.js';
// frames and their wire sizes
export type { Frame } from '../core/frame.js';
export { Ecn, FrameType, makeFrame, PRIORITIES, Priority, WireSize } from '../core/frame.js';
export { Histogram, type HistogramSnapshot } from '../core/histogram.js';
export {
  type DetectorFactory,
  keepaliveFrame,
  type LinkDetector,
  type LivenessEvents,
  type LivenessPort,
} from '../core/liveness.js';
// a node's config, its context and the roles a scheme plugs in
export type {
  FlowSpec,
  NodeConfig,
  NodeEvent,
  NodeReport,
  PortConfig,
  PortDir,
  SchemeNodeConfig,
} from '../core/messages.js';
export type { DisciplineFactory, NodeContext, Role } from '../core/node-runtime.js';
export type { EgressPort } from '../core/port.js';
export { Rng } from '../core/random.js';
export type { Scheduler, Timer } from '../core/scheduler.js';
export { formatNs, parseBytes, parseDurationNs, parseRateBps } from '../core/time.js';
export { SizeCdf } from '../host/cdf.js';
// a scheme's transport over the run's, which carries what is not its own (best effort)
export { TransportOverBestEffort } from '../host/transport/over-best-effort.js';
// hosts: the transport a scheme's transport sits on, and the flow-size distributions
export type {
  Nic,
  PartialReceiver,
  SenderStats,
  Transport,
  TransportComponents,
  WindowControl,
} from '../host/transport/types.js';
export { partialPathsOver, segmentBytes, segmentCount } from '../host/transport/types.js';
// switches: routing and the module a scheme plugs in
export { EcmpUpDown, flowHash, type Routing } from '../switch/routing.js';
export type { SwitchScheme } from '../switch/scheme.js';
export {
  bitsPerLevel,
  type F10Address,
  type F10Shape,
  inFailureGroup,
  parentIndices,
  prefix,
  type SubtreeType,
  samePrefix,
} from '../topology/f10-address.js';
// the topology as every process reads it, and the AB FatTree's addressing (F10 §3)
export type { LinkParams, TopoLink, Topology, TopoNode } from '../topology/types.js';
// the parts a node process loads
export type { ArbiterPart, HostPart, SchemeParts, SwitchPart } from './parts.js';
export { defineSchemeParts } from './parts.js';
