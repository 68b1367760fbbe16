/**
 * Bounds-checked big-endian reader over a Buffer. Every read past the end
 * throws a DecodeError with code `truncated`, so decoders never see garbage
 * from outside their frame and never need their own length checks.
 */
export class DecodeError extends Error {
  constructor(
    readonly code: 'truncated' | 'bad_checksum' | 'bad_length' | 'unsupported' | 'malformed',
    message: string,
    /** What to send the device for this refused frame (JT/T 808 general response "message error"); none by default. */
    readonly reply: Buffer | null = null,
  ) {
    super(message);
    this.name = 'DecodeError';
  }
}

/**
 * Big-endian reads at a fixed offset, for hot paths that check the length once up front
 * and must not allocate a Reader per record. Unchecked: the caller makes sure the bytes are there.
 */
export function u16At(buf: Buffer, at: number): number {
  return (buf[at]! << 8) | buf[at + 1]!;
}

export function u32At(buf: Buffer, at: number): number {
  return buf[at]! * 0x1000000 + ((buf[at + 1]! << 16) | (buf[at + 2]! << 8) | buf[at + 3]!);
}

export class Reader {
  offset: number;

  constructor(
    readonly buf: Buffer,
    offset = 0,
    readonly end = buf.length,
  ) {
    this.offset = offset;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  private need(n: number): number {
    const at = this.offset;
    if (at + n > this.end) {
      throw new DecodeError('truncated', `need ${n} byte(s) at offset ${at}, have ${this.end - at}`);
    }
    this.offset = at + n;
    return at;
  }

  u8(): number {
    return this.buf[this.need(1)]!;
  }

  i8(): number {
    return this.buf.readInt8(this.need(1));
  }

  u16(): number {
    return this.buf.readUInt16BE(this.need(2));
  }

  i16(): number {
    return this.buf.readInt16BE(this.need(2));
  }

  u24(): number {
    return this.buf.readUIntBE(this.need(3), 3);
  }

  u32(): number {
    return this.buf.readUInt32BE(this.need(4));
  }

  i32(): number {
    return this.buf.readInt32BE(this.need(4));
  }

  /** u64 as a Number: exact below 2^53, which covers millisecond timestamps and counters. */
  u64(): number {
    const at = this.need(8);
    return this.buf.readUInt32BE(at) * 0x1_0000_0000 + this.buf.readUInt32BE(at + 4);
  }

  /** Signed u64 as a BigInt, for IO values that use the whole range. */
  i64big(): bigint {
    return this.buf.readBigInt64BE(this.need(8));
  }

  /** A view (no copy) of the next n bytes. */
  bytes(n: number): Buffer {
    const at = this.need(n);
    return this.buf.subarray(at, at + n);
  }

  skip(n: number): void {
    this.need(n);
  }

  /** A reader over the next n bytes; this reader moves past them. */
  sub(n: number): Reader {
    const at = this.need(n);
    return new Reader(this.buf, at, at + n);
  }
}
