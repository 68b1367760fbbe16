import type { FastifyReply } from 'fastify';

/**
 * Sends a body that is already JSON (built from items serialised with the
 * route's own schema). Fastify passes a string or bytes with a JSON content
 * type through without serialising it again.
 */
export function sendSerialized(reply: FastifyReply, json: string | Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}

const COMMA = Buffer.from(',');

/** `{"data":[items...],"pagination":{...}}` from serialised items, in one copy. */
export function listBody(items: readonly Buffer[], pagination: { next_cursor: string | null; has_more: boolean }): Buffer {
  const parts: Buffer[] = [Buffer.from('{"data":[')];
  for (let i = 0; i < items.length; i++) {
    if (i > 0) parts.push(COMMA);
    parts.push(items[i]!);
  }
  parts.push(Buffer.from(`],"pagination":${JSON.stringify(pagination)}}`));
  return Buffer.concat(parts);
}
