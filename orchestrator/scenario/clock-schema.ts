/**
 * The scenario schema's clock sections (orchestrator/scenario/schema.ts): every node's oscillator
 * (`clocks:`), the host timing noise (`jitter:`) and PTP over the fabric (`ptp:`).
 */
import { distribution, doc, nodeName } from './schema-fragments.js';
import { duration } from './units.js';

export const clocksSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    "every node's own oscillator (absent: ideal clocks): its initial offset, frequency error, wander and read granularity; ptp: disciplines it",
  properties: {
    offset: doc(
      distribution,
      "each node's initial clock offset: a value or a distribution of durations, e.g. uniform(-10us, 10us)",
      'uniform(-10us, 10us)',
    ),
    freq: doc(
      distribution,
      "each node's frequency error in ppm: a value or a distribution, e.g. uniform(-50, 50)",
      'uniform(-50, 50)',
    ),
    wander: doc(
      { type: 'number', minimum: 0 },
      'random-walk frequency wander, ppm per √s (0: a steady frequency)',
      0.5,
    ),
    granularity: doc(duration, 'clock reads come in steps of this (8ns: a 125 MHz PHC counter)', '8ns'),
    reference: doc(nodeName, 'a node whose clock is perfect (error 0), e.g. the grandmaster (default: none)'),
  },
} as const;

/** host-side timing jitter models (seeded): software stamp delay, late transmissions */
export const jitterSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'host timing noise, seeded: how late software timestamps and transmissions are',
  properties: {
    stamp: doc(
      distribution,
      "software timestamps' delay after the true event (PTP software stamping), a duration or a distribution (default in conservative mode: lognormal(40ns, 1), a fit of what dilated runs measure; none in dilated mode, which has the machine's own)",
    ),
    send: doc(
      distribution,
      'how late each host transmission leaves after its scheduled time, a duration or a distribution, e.g. lognormal(200ns, 1) (default: none, ideal send timing)',
    ),
  },
} as const;

export const ptpSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'PTP (IEEE 1588) over the fabric: hosts discipline their clocks (clocks:) to a grandmaster the BMCA elects',
  properties: {
    timestamping: doc(
      { enum: ['hardware', 'software'] },
      'hardware: NIC stamps (exact); software: stamps taken in the stack, late by jitter.stamp',
      'hardware',
    ),
    switchClocks: doc(
      { enum: ['transparent', 'boundary', 'none'] },
      'what the switches are to PTP: transparent (they add each Sync/Delay_Req residence time to its correction field), boundary (each disciplines its own clock from its best port and is the master of the others, so every exchange is link-local and stepsRemoved grows per switch; hardware stamps), none (they forward PTP frames as any other)',
      'transparent',
    ),
    transparentClocks: doc(
      { type: 'boolean' },
      'the older form of switchClocks: true is transparent, false is none',
    ),
    delayMechanism: {
      enum: ['e2e', 'p2p'],
      description:
        "e2e (default): slaves measure the path to the master with Delay_Req; p2p: every port measures its link with Pdelay_Req, and transparent switches add the ingress link delay to every Sync (boundary clocks use their slave port's link delay)",
    },
    warmup: doc(
      duration,
      "how long PTP runs before traffic starts (ns: 5ms): the clocks synchronize first, as a datacenter's are long before a job runs; clock figures count from traffic start, and the warm-up's events and samples carry negative times",
      0,
    ),
    syncInterval: doc(duration, "the master's Sync period (ns: 100us)", '100us'),
    logSyncInterval: doc(
      { type: 'integer', minimum: -24, maximum: 8 },
      'the Sync period as IEEE 1588 and linuxptp give it, log₂ of seconds (-13: 122.07 µs); instead of syncInterval',
    ),
    announceInterval: doc(duration, "the master's Announce period (ns: 1ms)", '1ms'),
    logAnnounceInterval: doc(
      { type: 'integer', minimum: -24, maximum: 8 },
      'the Announce period, log₂ of seconds (-10: 977 µs); instead of announceInterval',
    ),
    delayReqInterval: doc(
      duration,
      "a slave's mean Delay_Req interval: each waits uniform in [0, 2 × this) (ns; default: the sync interval)",
    ),
    logMinDelayReqInterval: doc(
      { type: 'integer', minimum: -24, maximum: 8 },
      'the Delay_Req interval, log₂ of seconds (linuxptp logMinDelayReqInterval); instead of delayReqInterval',
    ),
    announceTimeout: doc(
      { type: 'integer', minimum: 1 },
      'announce intervals without an Announce before a slave drops its master and the BMCA runs again',
      3,
    ),
    candidates: doc(
      { type: 'array', items: nodeName, minItems: 1 },
      'master-capable hosts, best first (ties in their datasets go by this order; default: the first and the last host, or the hosts in datasets)',
    ),
    datasets: {
      type: 'object',
      description:
        "master-capable hosts' clock datasets (IEEE 1588-2019 7.6.2), compared by the BMCA field by field, lower wins; fields left out take the defaults (priority1 128, clockClass 248, clockAccuracy 254, offsetScaledLogVariance 65535, priority2 128)",
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          priority1: doc(
            { type: 'integer', minimum: 0, maximum: 255 },
            "compared first; lower wins (an operator's choice of grandmaster)",
            128,
          ),
          clockClass: doc(
            { type: 'integer', minimum: 0, maximum: 254 },
            'traceability of the time source (6: locked to GPS; 248: default); lower wins',
            248,
          ),
          clockAccuracy: doc(
            { type: 'integer', minimum: 0, maximum: 255 },
            'accuracy class (0x20: 25 ns, ..., 254: unknown); lower wins',
            254,
          ),
          offsetScaledLogVariance: doc(
            { type: 'integer', minimum: 0, maximum: 65535 },
            "the oscillator's stability (65535: not computed); lower wins",
            65535,
          ),
          priority2: doc(
            { type: 'integer', minimum: 0, maximum: 255 },
            'compared after the quality fields; lower wins (default 128, plus the rank in candidates)',
          ),
        },
      },
    },
    delayFilter: doc(
      { type: 'integer', minimum: 1 },
      'path delay measurements in the moving median a slave uses (linuxptp delay_filter_length)',
      10,
    ),
    lockThreshold: doc(
      duration,
      'a slave counts as locked once its offset stays within this (default 100ns with hardware stamps, 2us with software)',
    ),
    sample: doc(duration, "how often each clock's true error is sampled into clocks.csv (ns: 10us)", '10us'),
    servo: {
      type: 'object',
      additionalProperties: false,
      description:
        "the PI servo, as linuxptp's pi.c: kp = min(kpScale · interval^kpExponent, 0.7), ki likewise (defaults: linuxptp's for the stamping mode)",
      properties: {
        kpScale: doc(
          { type: 'number', exclusiveMinimum: 0 },
          'proportional gain scale (linuxptp pi_proportional_scale; default 0.7 hardware, 0.1 software)',
        ),
        kpExponent: doc(
          { type: 'number' },
          'proportional gain exponent of the sync interval in s (-1: gains scale with the short intervals of a fabric)',
          -1,
        ),
        kiScale: doc(
          { type: 'number', minimum: 0 },
          'integral gain scale (linuxptp pi_integral_scale; default 0.3 hardware, 0.001 software)',
        ),
        kiExponent: doc({ type: 'number' }, 'integral gain exponent of the sync interval in s', -1),
        maxFrequency: doc(
          { type: 'number', exclusiveMinimum: 0 },
          'the largest frequency correction, ppb (linuxptp max_frequency)',
          900000,
        ),
        stepThreshold: doc(
          duration,
          'an offset above this steps the clock instead of slewing it (0: never after the first)',
          0,
        ),
        firstStepThreshold: doc(
          duration,
          'the first measured offset above this steps the clock (linuxptp first_step_threshold is 20 µs at 1 s intervals; slewing that much at the 900 ppm clamp would take 22 ms here)',
          '1us',
        ),
      },
    },
  },
} as const;
