import { describe, expect, it } from 'vitest';
import { EVENT_KINDS } from '../../core/alarms.js';
import { kindsMatching, matchesKinds, parseKindPattern } from '../../core/webhook-kinds.js';

describe('parseKindPattern', () => {
  it('takes every exact kind, * and prefixes that name at least one kind', () => {
    for (const kind of EVENT_KINDS) expect(parseKindPattern(kind)).toEqual({ type: 'exact', kind });
    expect(parseKindPattern('*')).toEqual({ type: 'all' });
    expect(parseKindPattern('alarm.*')).toEqual({ type: 'prefix', prefix: 'alarm.' });
    expect(parseKindPattern('alarm.dsm.*')).toEqual({ type: 'prefix', prefix: 'alarm.dsm.' });
    expect(parseKindPattern('event.*')).toEqual({ type: 'prefix', prefix: 'event.' });
  });

  it('refuses unknown kinds, prefixes of nothing, partial words and other wildcards', () => {
    for (const bad of ['alarm.dsm', 'event.harsh', 'alarm.dsm.yawn', 'Alarm.*', 'alarm*', 'alarm.ds*', 'alarm.dsm.fatigue.*', 'nothing.*', '.*', '**', '*.*', '', ' geofence.enter']) {
      expect(parseKindPattern(bad), bad).toBeNull();
    }
  });
});

describe('matchesKinds', () => {
  it('matches exact kinds, prefixes on whole segments, and everything for *', () => {
    expect(matchesKinds(['geofence.enter'], 'geofence.enter')).toBe(true);
    expect(matchesKinds(['geofence.enter'], 'geofence.exit')).toBe(false);
    expect(matchesKinds(['alarm.*'], 'alarm.bsd')).toBe(true);
    expect(matchesKinds(['alarm.dsm.*'], 'alarm.dsm.phone')).toBe(true);
    expect(matchesKinds(['alarm.dsm.*'], 'alarm.adas.collision')).toBe(false);
    expect(matchesKinds(['device.*', 'event.sos'], 'event.sos')).toBe(true);
    expect(matchesKinds(['*'], 'position.updated')).toBe(true);
    expect(matchesKinds(['alarm.*'], 'alarmist.thing')).toBe(false);
  });

  it('lets an invalid pattern select nothing', () => {
    expect(matchesKinds(['alarm'], 'alarm.bsd')).toBe(false);
    expect(kindsMatching(['bogus.*'])).toEqual(new Set());
  });

  it('kindsMatching lists what the patterns select', () => {
    expect([...kindsMatching(['alarm.adas.*', 'device.offline'])].sort()).toEqual(['alarm.adas.collision', 'alarm.adas.lane_departure', 'device.offline']);
    expect(kindsMatching(['*']).size).toBe(EVENT_KINDS.length);
  });
});
