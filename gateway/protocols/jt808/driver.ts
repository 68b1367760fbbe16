/** 0x0702 driver identity: the driver card read or removed, as a status-only record. */
import { bcdDigits } from '../../codec/bcd.js';
import { Reader } from '../../codec/reader.js';
import { recordWithoutLocation, type DecodedRecord, type SessionInfo } from '../../protocol.js';
import type { Header } from './header.js';
import { asciiField, gbkText } from './text.js';
import { DEFAULT_ZONE_MINUTES, bcdTime } from './time.js';

type Attributes = DecodedRecord['attributes'];

/**
 * 0x0702 driver identity (2013): status u8 (1 card in, 2 out) · BCD time · [IC result u8 ·
 * [name length u8 · name · certificate code[20] · agency length u8 · agency · validity BCD[4]]].
 * A status-only record: the driver change at the time the card was read.
 */
export function decodeDriverIdentity(data: Buffer, at: number, end: number, h: Header, session: SessionInfo): DecodedRecord {
  const r = new Reader(data, at, end);
  const cardStatus = r.u8();
  const timeAt = r.offset;
  r.skip(6);
  const fixTime = bcdTime(data, timeAt, session.timezoneMinutes ?? DEFAULT_ZONE_MINUTES);
  const attributes: Attributes = { driver_card_status: cardStatus === 1 ? 'inserted' : cardStatus === 2 ? 'removed' : cardStatus };
  if (cardStatus === 1 && r.remaining > 0) {
    const result = r.u8();
    attributes.driver_card_result = result;
    if (result === 0) {
      const nameLength = r.u8();
      attributes.driver_name = gbkText(data, r.offset, r.offset + nameLength);
      r.skip(nameLength);
      attributes.driver_card_code = asciiField(r.bytes(20));
      const agencyLength = r.u8();
      attributes.driver_card_agency = gbkText(data, r.offset, r.offset + agencyLength);
      r.skip(agencyLength);
      if (r.remaining >= 4) attributes.driver_card_valid_until = bcdDigits(r.bytes(4));
    }
  }
  return recordWithoutLocation(Number.isNaN(fixTime) ? session.now : fixTime, attributes, data.subarray(h.bodyStart, end));
}
