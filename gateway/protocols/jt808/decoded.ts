/** Building the `Decoded` result of a JT/T 808 frame. */
import type { Decoded, DecodedRecord, DeviceIdentity } from '../../protocol.js';
import { parseZoneText } from './time.js';

export function withIdentity(identity: DeviceIdentity | undefined, decoded: Decoded): Decoded {
  if (identity !== undefined) decoded.identity = identity;
  return decoded;
}

export function ignored(identity: DeviceIdentity | undefined, reply: Buffer | null, reason: string): Decoded {
  return withIdentity(identity, { records: [], replies: [], reply, ignoredReason: reason });
}

/** Location frames: announce a zone the terminal stated in item 0xEB (applies to later frames). */
export function locationDecoded(identity: DeviceIdentity | undefined, records: DecodedRecord[], reply: Buffer | null): Decoded {
  const decoded: Decoded = { records, replies: [], reply };
  if (identity !== undefined) decoded.identity = identity;
  const zoneText = records.length > 0 ? records[records.length - 1]!.attributes.timezone : undefined;
  if (typeof zoneText === 'string') {
    const minutes = parseZoneText(zoneText);
    if (minutes !== null) decoded.announcedTimezoneMinutes = minutes;
  }
  return decoded;
}
