/**
 * A proportional-integral clock servo with the structure of linuxptp's `pi.c` (Richard Cochran; servo
 * framework in `servo.c` / `servo.h`): the first sample is stored, the second estimates the frequency
 * error from two offsets and may ask for a step, every later sample runs the PI loop with anti-windup.
 * Offsets and timestamps are nanoseconds, frequencies are ppb (ns/s). Hot path: one reused result
 * object, no allocation per sample.
 */

export type ServoState = 'unlocked' | 'jump' | 'locked';

/**
 * Gains follow pi.c's `pi_sync_interval`: kp = min(kpScale * interval^kpExponent, kpNormMax / interval),
 * ki likewise. Thresholds are in ns (servo.c multiplies the seconds from ptp4l.conf by 1e9).
 */
export interface ServoConfig {
  kpScale: number;
  kpExponent: number;
  kpNormMax: number;
  kiScale: number;
  kiExponent: number;
  kiNormMax: number;
  /** symmetric clamp on the returned ppb and on the drift estimate (servo->max_frequency) */
  maxFrequencyPpb: number;
  /** step (and re-estimate) when |offset| exceeds this after the first update; 0 = never */
  stepThresholdNs: number;
  /** step when |offset| exceeds this on the first update only; 0 = never step on the first update */
  firstStepThresholdNs: number;
}

type Gains = Pick<
  ServoConfig,
  'kpScale' | 'kpExponent' | 'kpNormMax' | 'kiScale' | 'kiExponent' | 'kiNormMax'
>;

/**
 * Hardware time stamping: pi.c's HWTS_KP_SCALE 0.7 / HWTS_KI_SCALE 0.3, with ptp4l's config.c defaults
 * pi_proportional_exponent -0.3, pi_integral_exponent 0.4, pi_proportional_norm_max 0.7,
 * pi_integral_norm_max 0.3. At a 1 s sync interval this gives kp 0.7, ki 0.3; faster sync raises kp and
 * lowers ki until the norm caps bite.
 */
export const HW_GAINS: Readonly<Gains> = Object.freeze({
  kpScale: 0.7,
  kpExponent: -0.3,
  kpNormMax: 0.7,
  kiScale: 0.3,
  kiExponent: 0.4,
  kiNormMax: 0.3,
});

/** Software time stamping: pi.c's SWTS_KP_SCALE 0.1 / SWTS_KI_SCALE 0.001, same config.c exponents and caps. */
export const SW_GAINS: Readonly<Gains> = Object.freeze({
  kpScale: 0.1,
  kpExponent: -0.3,
  kpNormMax: 0.7,
  kiScale: 0.001,
  kiExponent: 0.4,
  kiNormMax: 0.3,
});

/**
 * ptp4l defaults: step_threshold 0.0 (never step once running), first_step_threshold 0.00002 s (20 us).
 * linuxptp clamps to min(the clock's max adjustment, max_frequency); the PHC limit is hardware-dependent,
 * so the emulator stands in 900000 ppb (900 ppm) for it.
 */
export function defaultServoConfig(mode: 'hardware' | 'software'): ServoConfig {
  return {
    ...(mode === 'hardware' ? HW_GAINS : SW_GAINS),
    maxFrequencyPpb: 900_000,
    stepThresholdNs: 0,
    firstStepThresholdNs: 20_000,
  };
}

/**
 * Sign convention as linuxptp: `offsetNs` is slave minus master and `localTsNs` is the slave's time of the
 * measurement (ptp4l passes the ingress timestamp t2). The returned `ppb` is what pi.c returns; the
 * caller sets the slave's frequency adjustment to `-ppb` (ptp4l: clockadj_set_freq(clkid, -adj)), and on
 * 'jump' also steps the slave clock by `-offsetNs` before doing so. On 'unlocked' ppb is the previous
 * value (pi.c's last_freq), so re-applying it is harmless.
 */
export interface Servo {
  /**
   * Feeds one offset measurement. `weight` scales the PI terms (ptp4l passes 1.0). The returned object
   * is reused: read it before the next call.
   */
  sample(offsetNs: number, localTsNs: number, weight?: number): { ppb: number; state: ServoState };
  /** Rescales kp/ki for a new sync interval in seconds (pi_sync_interval). */
  syncInterval(intervalS: number): void;
  /** Back to the first-sample state; the drift estimate is kept (pi_reset only clears count). */
  reset(): void;
  /** State reported by the last sample ('unlocked' before any). */
  readonly state: ServoState;
}

// pi.c's FREQ_EST_MARGIN: 0.1% slack so a sample arriving just before the estimation interval still counts
const FREQ_EST_MARGIN = 0.001;

class PiServo implements Servo {
  private readonly cfg: ServoConfig;
  private readonly out = { ppb: 0, state: 'unlocked' as ServoState };
  private offset0 = 0;
  private offset1 = 0;
  private local0 = 0;
  private local1 = 0;
  private drift: number;
  private lastFreq: number;
  private kp = 0;
  private ki = 0;
  private count = 0;
  // servo.c keeps first_update in the generic servo and clears it on JUMP or LOCKED, not on UNLOCKED
  private firstUpdate = true;
  private current: ServoState = 'unlocked';

  constructor(cfg: ServoConfig, initialPpb: number) {
    this.cfg = { ...cfg };
    // pi_servo_create seeds both drift and last_freq with the clock's current adjustment
    this.drift = initialPpb;
    this.lastFreq = initialPpb;
    // pi.c starts with kp = ki = 0 until ptp4l calls servo_sync_interval; with ki = 0 the frequency
    // estimate would wait 1000 s, so assume a 1 s interval until the caller says otherwise
    this.syncInterval(1);
  }

  get state(): ServoState {
    return this.current;
  }

  sample(offsetNs: number, localTsNs: number, weight = 1): { ppb: number; state: ServoState } {
    const cfg = this.cfg;
    const max = cfg.maxFrequencyPpb;
    const absOffset = Math.abs(offsetNs);
    let ppb = this.lastFreq;
    let state: ServoState;

    switch (this.count) {
      case 0:
        this.offset0 = offsetNs;
        this.local0 = localTsNs;
        state = 'unlocked';
        this.count = 1;
        break;
      case 1: {
        this.offset1 = offsetNs;
        this.local1 = localTsNs;
        // pi.c: make sure the first sample is older than the second
        if (this.local0 >= this.local1) {
          state = 'unlocked';
          this.count = 0;
          break;
        }
        // pi.c: wait long enough (0.016 / ki, at most 1000 s) before estimating the frequency offset;
        // sample 0 stays, sample 1 is overwritten by the next call
        let localDiff = (this.local1 - this.local0) / 1e9;
        localDiff += localDiff * FREQ_EST_MARGIN;
        let freqEstInterval = 0.016 / this.ki;
        if (freqEstInterval > 1000) freqEstInterval = 1000;
        if (localDiff < freqEstInterval) {
          state = 'unlocked';
          break;
        }
        // pi.c adjusts (not replaces) drift: (1e9 - drift) corrects for the local clock already running
        // at drift ppb, so a kept drift from before a reset is refined rather than discarded
        this.drift += ((1e9 - this.drift) * (this.offset1 - this.offset0)) / (this.local1 - this.local0);
        if (this.drift < -max) this.drift = -max;
        else if (this.drift > max) this.drift = max;

        const first = cfg.firstStepThresholdNs;
        const step = cfg.stepThresholdNs;
        if ((this.firstUpdate && first > 0 && first < absOffset) || (step > 0 && step < absOffset)) {
          state = 'jump';
        } else {
          state = 'locked';
        }
        ppb = this.drift;
        this.count = 2;
        break;
      }
      default: {
        // pi.c: past the step threshold start over; the step happens in the count-1 branch after the
        // drift has been re-estimated, as at start-up
        const step = cfg.stepThresholdNs;
        if (step > 0 && step < absOffset) {
          state = 'unlocked';
          this.count = 0;
          break;
        }
        const kiTerm = this.ki * offsetNs * weight;
        ppb = this.kp * offsetNs * weight + this.drift + kiTerm;
        // anti-windup: the integrator only absorbs ki_term when the output is not saturated
        if (ppb < -max) ppb = -max;
        else if (ppb > max) ppb = max;
        else this.drift += kiTerm;
        state = 'locked';
        break;
      }
    }

    if (state !== 'unlocked') this.firstUpdate = false;
    this.lastFreq = ppb;
    this.current = state;
    this.out.ppb = ppb;
    this.out.state = state;
    return this.out;
  }

  syncInterval(intervalS: number): void {
    if (!(intervalS > 0) || !Number.isFinite(intervalS)) {
      throw new RangeError(`servo sync interval must be a positive number of seconds, got ${intervalS}`);
    }
    const cfg = this.cfg;
    this.kp = cfg.kpScale * intervalS ** cfg.kpExponent;
    if (this.kp > cfg.kpNormMax / intervalS) this.kp = cfg.kpNormMax / intervalS;
    this.ki = cfg.kiScale * intervalS ** cfg.kiExponent;
    if (this.ki > cfg.kiNormMax / intervalS) this.ki = cfg.kiNormMax / intervalS;
  }

  reset(): void {
    // pi_reset clears only count; servo_reset leaves first_update alone too
    this.count = 0;
  }
}

/**
 * `initialPpb` is the clock's current adjustment in servo convention (ptp4l passes -fadj read from the
 * clock): it seeds the drift estimate and the value returned while unlocked.
 */
export function createServo(config: ServoConfig, initialPpb = 0): Servo {
  if (!(config.maxFrequencyPpb > 0)) {
    throw new RangeError(`maxFrequencyPpb must be positive, got ${config.maxFrequencyPpb}`);
  }
  if (!(config.kpNormMax > 0) || !(config.kiNormMax > 0)) {
    throw new RangeError('kpNormMax and kiNormMax must be positive');
  }
  return new PiServo(config, initialPpb);
}
