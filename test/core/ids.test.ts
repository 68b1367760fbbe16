/**
 * Content-derived ids (core/ids.ts) must never change between versions: a frame
 * resent after an upgrade has to get the id it got before, or the store keeps it
 * twice. The pinned values were computed by the first implementation (a SHA-1
 * Hash fed the namespace, then a NUL and each part).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { contentUuid, idTime, newId, timeOrderedContentUuid } from '../../core/ids.js';

const RAW = Buffer.from('000000000000003608010000016b40d8ea30', 'hex');

/** The digest as the first implementation made it, piece by piece. */
function pieceByPiece(namespace: string, parts: Array<string | Buffer>): string {
  const h = createHash('sha1');
  h.update(namespace);
  for (const p of parts) {
    h.update('\u0000');
    h.update(p);
  }
  return h.digest('hex');
}

describe('content-derived ids', () => {
  it('keep the values they had', () => {
    expect(timeOrderedContentUuid(1764115200123, 'position', 'dev_01jabc', RAW)).toBe('019abd75-b87b-8970-bfd9-db627590aac4');
    expect(timeOrderedContentUuid(1764115200123, 'alarm', 'dev_01jabc', 'sos', Buffer.from([1, 2, 3]))).toBe('019abd75-b87b-86dc-b183-a0af695d7898');
    expect(contentUuid('DeviceEventRaised', 'harsh_braking:evt:0d1f')).toBe('995fd049-197f-5906-bd56-84a94f907c13');
    expect(contentUuid('unknown-device', 'ünïcode-ιδ', '1764115200123')).toBe('a2407186-2492-50cd-87c1-9b0cfccf2f1e');
    expect(contentUuid('empty')).toBe('ad87109b-fff0-565f-8dd8-cf4943b04d16');
  });

  it('hash the same bytes as feeding the parts one by one, whatever their sizes', () => {
    // Parts larger than the reused buffer, and many small ones after a large one (the buffer is grown, then reused).
    const inputs: Array<[string, Array<string | Buffer>]> = [
      ['position', ['dev_1', Buffer.alloc(5000, 7)]],
      ['status', ['dev_2', 'x'.repeat(3000), Buffer.from([0, 0, 0])]],
      ['alarm', ['dev_3', '', Buffer.alloc(0), 'é']],
      ['position', ['dev_4', RAW]],
    ];
    for (const [namespace, parts] of inputs) {
      const hex = pieceByPiece(namespace, parts).slice(0, 32);
      // v5 layout: version and variant bits set, the rest is the digest.
      const uuid = contentUuid(namespace, ...parts).replaceAll('-', '');
      expect(uuid.slice(0, 12)).toBe(hex.slice(0, 12));
      expect(uuid.slice(13, 16)).toBe(hex.slice(13, 16));
      expect(uuid.slice(18)).toBe(hex.slice(18));
      // The time-ordered form replaces the first 48 bits with the time and keeps the rest.
      const timed = timeOrderedContentUuid(1000, namespace, ...parts).replaceAll('-', '');
      expect(timed.slice(0, 12)).toBe('0000000003e8');
      expect(timed.slice(18)).toBe(hex.slice(18));
    }
  });
});

describe('idTime', () => {
  it('gives back the time an id was made at', () => {
    for (const t of [0, 1_700_000_000_000, Date.UTC(2026, 11, 2, 6, 0, 0, 123), 2 ** 48 - 1]) expect(idTime(newId('rpl', t))).toBe(t);
  });
});
