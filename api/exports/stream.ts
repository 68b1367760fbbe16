/**
 * Sends an export as it is produced: a Readable pulled by the response's
 * pipe, so a chunk is asked for only once the socket took the last one (the
 * pipe waits for 'drain' whenever a write returns false). Memory stays at a
 * page whatever the export's size; a client that leaves ends the walk.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

export interface ExportFile {
  contentType: string;
  /** Without a directory; only [A-Za-z0-9._-] are kept. */
  filename: string;
}

export function sendExport(reply: FastifyReply, file: ExportFile, chunks: AsyncIterable<string> | Iterable<string>): FastifyReply {
  const safe = file.filename.replace(/[^A-Za-z0-9._-]/g, '_');
  return reply
    .header('content-type', file.contentType)
    .header('content-disposition', `attachment; filename="${safe}"`)
    .send(Readable.from(chunks, { objectMode: false, highWaterMark: 64 * 1024 }));
}

/** A walk over keyset pages: `read(after)` gives a page and the key to go on from (null: done). */
export async function* pages<K, T>(read: (after: K | null) => Promise<{ rows: T[]; next: K | null }> | { rows: T[]; next: K | null }): AsyncGenerator<T[]> {
  let after: K | null = null;
  do {
    const page: { rows: T[]; next: K | null } = await read(after);
    if (page.rows.length > 0) yield page.rows;
    after = page.next;
  } while (after !== null);
}
