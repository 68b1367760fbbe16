/**
 * The numbers behind server-side detection, in one place so the README, the
 * tests and the detectors cannot disagree. 1 g = 9.81 m/s² = 35.3 km/h per s.
 */
export const THRESHOLDS = {
  /** Fixes further apart than this say nothing about one manoeuvre (1 Hz trackers give 1 s). */
  maxFixGapMs: 4_000,
  /** Harsh braking: speed falling at least this fast (≈ 0.31 g), ... */
  harshBrakeKmhPerS: 11,
  /** Harsh acceleration: speed rising at least this fast (≈ 0.28 g), ... */
  harshAccelerationKmhPerS: 10,
  /** ... for at least this long (one 1 s interval at 1 Hz, two at 2 Hz). Cornering too. */
  minDurationMs: 1_000,
  /** Faster speed changes (≈ 1.1 g) are GNSS glitches, not driving: they break an episode. */
  implausibleKmhPerS: 40,
  /** Cornering: lateral acceleration v·ω at least this (≈ 0.3 g): 21°/s at 30 km/h, 12°/s at 50, 7°/s at 90. */
  curveLateralMs2: 3,
  /** ... with both fixes at least this fast (heading is noise when crawling). */
  curveMinSpeedKmh: 25,
  /** Lateral acceleration above this (≈ 1 g) is a heading glitch. */
  implausibleLateralMs2: 10,
  /** Overspeed re-arms once the speed drops below limit − this margin (no flapping around the limit). */
  overspeedRearmMarginKmh: 5,
  /** ... or once no fix came for this long (the overspeed seen before says nothing about the next trip). */
  overspeedRearmGapMs: 10 * 60_000,
  /**
   * Double reporting: a server detection is dropped when the device itself
   * reported the same kind within this long of it (before or after); so a
   * detection is held until a report this much later shows the device did not.
   */
  dedupWindowMs: 10_000,
  /** JT/T 808 alarm bits repeated in consecutive reports at most this far apart are one alarm, not many. */
  stateAlarmMaxGapMs: 300_000,
  /** A device alarm without a location takes the last fix when it is at most this old. */
  alarmPositionMaxAgeMs: 60_000,
} as const;
