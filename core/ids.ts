/**
 * Ids: opaque, prefixed, sortable by creation (ULID-like: 48-bit time +
 * 80 random bits in Crockford base32), and deterministic UUIDs for events
 * whose identity comes from their content (idempotent appends and replays).
 */
import { hash, randomFillSync } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * Prefixes `newId` issues. `evt_` ids are not among them: they derive from their cause
 * (`deviceEventId`). `whk_`, `dlv_` and `rpl_` are webhook endpoints, deliveries and replays;
 * `usr_` and `ses_` panel users and their sessions; `cmd_` device commands.
 */
export type IdPrefix = 'cus' | 'dev' | 'drv' | 'geo' | 'key' | 'cli' | 'whk' | 'dlv' | 'rpl' | 'usr' | 'ses' | 'evt' | 'cmd';

/** Random bytes are drawn from a pool refilled 4 KiB at a time: one CSPRNG call per ~400 ids, not one per id. */
const randomPool = Buffer.alloc(4096);
let poolAt = randomPool.length;
function randomTen(): Buffer {
  if (poolAt + 10 > randomPool.length) {
    randomFillSync(randomPool);
    poolAt = 0;
  }
  poolAt += 10;
  return randomPool.subarray(poolAt - 10, poolAt);
}

export function ulid(nowMs: number, random: Buffer = randomTen()): string {
  let time = '';
  let t = nowMs;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32]! + time;
    t = Math.floor(t / 32);
  }
  let rand = '';
  // 80 bits -> 16 base32 chars, 5 bits at a time.
  let acc = 0;
  let bits = 0;
  for (const byte of random) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      rand += CROCKFORD[(acc >> bits) & 31]!;
    }
    acc &= (1 << bits) - 1;
  }
  return time + rand;
}

/**
 * `evt_` + a ULID whose time part is when it happened and whose random part
 * comes from the cause: sortable by occurrence, identical on every replay.
 */
export function deviceEventId(occurredAt: number, cause: string): string {
  return namedId('evt', occurredAt, cause);
}

/** A `newId`-shaped id whose random part comes from `cause`: every node that derives it from the same cause gets the same id. */
export function namedId(prefix: IdPrefix, timeMs: number, cause: string): string {
  const entropy = hash('sha256', cause, 'buffer').subarray(0, 10);
  return `${prefix}_${ulid(Math.max(0, timeMs), entropy).toLowerCase()}`;
}

export function newId(prefix: IdPrefix, nowMs: number): string {
  return `${prefix}_${ulid(nowMs).toLowerCase()}`;
}

/** The milliseconds a `newId` id was made at (its ULID's first 10 characters). */
export function idTime(id: string): number {
  let t = 0;
  for (const c of id.slice(id.indexOf('_') + 1, id.indexOf('_') + 11).toUpperCase()) t = t * 32 + CROCKFORD.indexOf(c);
  return t;
}

/** A random RFC 4122 v4 UUID. */
export function randomUuid(): string {
  return crypto.randomUUID();
}

/**
 * A name-based UUID (v5 layout, SHA-1) from a namespace string and content:
 * the same input always gives the same event id, so a resent frame or a
 * replayed projection never stores an event twice.
 */
export function contentUuid(namespace: string, ...parts: Array<string | Buffer>): string {
  const hex = digestHex(namespace, parts);
  return formatUuid(hex.slice(0, 12), '5', hex);
}

/**
 * Like contentUuid, but the first 48 bits are `timeMs` (UUIDv8 layout, as in
 * UUIDv7): ids of telemetry recorded at about the same time sort together, so
 * the store's unique index grows at its right edge instead of at random pages.
 */
export function timeOrderedContentUuid(timeMs: number, namespace: string, ...parts: Array<string | Buffer>): string {
  const t = Math.max(0, Math.min(Math.floor(timeMs), 2 ** 48 - 1));
  // Through a Buffer: a number this large to hex text by toString(16) costs as much as the hash.
  timeBytes.writeUIntBE(t, 0, 6);
  return formatUuid(timeBytes.toString('hex'), '8', digestHex(namespace, parts));
}

const timeBytes = Buffer.alloc(6);

/** Where digestHex() lays out its input: grown when an input is larger, reused otherwise. */
let scratch = Buffer.alloc(1024);

/**
 * SHA-1 of `namespace`, then a NUL and each part, in one call: the same bytes as hashing them
 * piece by piece (ids never change), without a Hash object per id (the gateway makes one per record).
 * As hex: on Node 20 a digest returned as a Buffer costs about twice as much as the same digest as
 * text (docs/performance.md), and the id is text anyway.
 */
function digestHex(namespace: string, parts: Array<string | Buffer>): string {
  let size = Buffer.byteLength(namespace);
  for (const p of parts) size += 1 + (typeof p === 'string' ? Buffer.byteLength(p) : p.length);
  if (size > scratch.length) scratch = Buffer.alloc(Math.max(size, scratch.length * 2));
  let at = scratch.write(namespace, 0);
  for (const p of parts) {
    scratch[at++] = 0;
    at += typeof p === 'string' ? scratch.write(p, at) : p.copy(scratch, at);
  }
  return hash('sha1', scratch.subarray(0, at), 'hex');
}

const HEX_VALUE = '0123456789abcdef';
/** The variant's two bits (10) over a hex digit's lower two: 8, 9, a or b. */
const VARIANT_DIGIT = '89ab89ab89ab89ab';

/**
 * A UUID from 12 hex digits of head, a version digit and the digest's hex digits 13-31
 * (digit 12 is the version's, digit 16's high bits the variant's).
 */
function formatUuid(head: string, version: string, hex: string): string {
  const variant = VARIANT_DIGIT[HEX_VALUE.indexOf(hex[16]!)]!;
  return `${head.slice(0, 8)}-${head.slice(8, 12)}-${version}${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
