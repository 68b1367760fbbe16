/** Bytes of a refused frame's hex written to a log line: enough to recognise it, too few to fill a disk. */
const LOG_HEX_BYTES = 64;

/** A frame's hex for a log line, cut after LOG_HEX_BYTES bytes with the full length said. */
export function hexOf(buf: Buffer): string {
  return buf.length > LOG_HEX_BYTES ? `${buf.toString('hex', 0, LOG_HEX_BYTES)}…(${buf.length} bytes)` : buf.toString('hex');
}
