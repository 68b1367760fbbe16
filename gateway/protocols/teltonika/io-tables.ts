/**
 * Named IO elements: the FMB-family table (EYE sensor IOs) and the BLE tag blobs, read into
 * `tagN_…` and `eye_…` attributes next to their raw `io<ID>` values.
 */
import { ioKey, type Attributes } from './io.js';

/**
 * FMB/FMC/FMM/FMT/FMP/FTC/FTM/MTB units share one AVL ID table; older FM6xx/FM36/TAT
 * units reuse some ids for other things. Unknown models get raw `ioNNN` values only.
 */
export function usesFmbIoTable(model: string | null): boolean {
  return model !== null && /^(FM[BCMTPU]|FT[CM]|MTB)/i.test(model);
}

/** BLE blobs whose TLV content we name (`tagN_…`); the raw blob stays as `ioNNN` hex. */
export const BLE_TAG_BLOB_IDS = new Set([548, 10828, 10829, 10831, 11317]);

/**
 * BLE tag blob: a format byte (1), then per tag a length byte and that many bytes of
 * parameters, each `id u8 · length u8 · value`. Tags are numbered from 1 across every blob
 * of the record. A blob that does not parse adds nothing (its hex is kept anyway).
 * Returns the number of tags named so far.
 */
export function addBleTagValues(blob: Buffer, tagsBefore: number, attributes: Attributes): number {
  if (blob.length < 1 || blob[0] !== 0x01) return tagsBefore;
  const found: Attributes = {};
  let tag = tagsBefore;
  let at = 1;
  while (at < blob.length) {
    const entryEnd = at + 1 + blob[at]!;
    if (entryEnd > blob.length) return tagsBefore;
    tag += 1;
    for (let p = at + 1; p < entryEnd; ) {
      if (p + 2 > entryEnd) return tagsBefore;
      const valueEnd = p + 2 + blob[p + 1]!;
      if (valueEnd > entryEnd) return tagsBefore;
      addTagParameter(found, `tag${tag}_`, blob[p]!, blob.subarray(p + 2, valueEnd));
      p = valueEnd;
    }
    at = entryEnd;
  }
  Object.assign(attributes, found);
  return tag;
}

/** Parameter ids of a BLE tag entry; see README.md for the mapping. */
function addTagParameter(out: Attributes, prefix: string, id: number, value: Buffer): void {
  if (id === 0x00 && value.length === 1) out[`${prefix}rssi_dbm`] = value.readInt8(0);
  else if (id === 0x01) out[`${prefix}id`] = value.toString('hex');
  else if (id === 0x02) addEyeSensorPayload(out, prefix, value);
  else if (id === 0x0e && value.length === 2) out[`${prefix}battery_mv`] = value.readUInt16BE(0);
  else if (value.length >= 1 && value.length <= 4) out[`${prefix}param${id}`] = value.readUIntBE(0, value.length);
  else out[`${prefix}param${id}`] = value.toString('hex');
}

/**
 * Teltonika EYE sensor advertisement data from the flags byte on: each flag bit says which
 * field follows, in bit order. Bit 3 (magnet state) and bit 6 (low battery) carry no bytes.
 */
function addEyeSensorPayload(out: Attributes, prefix: string, value: Buffer): void {
  if (value.length < 1) return;
  const flags = value[0]!;
  const need = 1 + (flags & 0x01 ? 2 : 0) + (flags & 0x02 ? 1 : 0) + (flags & 0x10 ? 2 : 0) + (flags & 0x20 ? 3 : 0) + (flags & 0x80 ? 1 : 0);
  if (value.length < need) return;
  let at = 1;
  if (flags & 0x01) {
    out[`${prefix}temp_c`] = value.readInt16BE(at) / 100;
    at += 2;
  }
  if (flags & 0x02) out[`${prefix}humidity_pct`] = value[at++]!;
  if (flags & 0x04) out[`${prefix}magnet`] = (flags & 0x08) !== 0;
  if (flags & 0x10) {
    const movement = value.readUInt16BE(at);
    out[`${prefix}moving`] = (movement & 0x8000) !== 0;
    out[`${prefix}movement_count`] = movement & 0x7fff;
    at += 2;
  }
  if (flags & 0x20) {
    out[`${prefix}pitch_deg`] = value.readInt8(at);
    out[`${prefix}roll_deg`] = value.readInt16BE(at + 1);
    at += 3;
  }
  out[`${prefix}low_battery`] = (flags & 0x40) !== 0;
  if (flags & 0x80) out[`${prefix}voltage_mv`] = 2000 + value[at]! * 10;
}

/** FMB-family EYE sensor IOs: 10800-10803 temperature (signed, 0.01 °C), 10804-10807 humidity (%). */
export function addEyeSensorValues(attributes: Attributes): void {
  for (let n = 0; n < 4; n++) {
    const temp = attributes[ioKey(10800 + n)];
    if (typeof temp === 'number') attributes[`eye_temp${n + 1}_c`] = ((temp << 16) >> 16) / 100;
    const humidity = attributes[ioKey(10804 + n)];
    if (typeof humidity === 'number') attributes[`eye_humidity${n + 1}_pct`] = humidity;
  }
}
