/** JT/T 808 terminal messages for tests, built field by field as a unit writes them. */
import { xor8 } from '../../gateway/codec/crc.js';
import { escapeFrame } from '../../gateway/protocols/jt808/frame.js';

const bytes = (h: string) => Buffer.from(h, 'hex');

/** A terminal message built field by field (2013 header, or 2019 with `version`), escaped for the wire. */
export function terminalMessage(msgId: number, phone: string, serial: number, body: Buffer, version: number | null = null): Buffer {
  const header = Buffer.alloc(version === null ? 12 : 17);
  header.writeUInt16BE(msgId, 0);
  header.writeUInt16BE(body.length | (version === null ? 0 : 0x4000), 2);
  let at = 4;
  if (version !== null) header[at++] = version;
  at += bytes(phone).copy(header, at);
  header.writeUInt16BE(serial, at);
  const content = Buffer.concat([header, body, Buffer.alloc(1)]);
  content[content.length - 1] = xor8(content, 0, content.length - 1);
  return escapeFrame(content);
}
