/** JT/T 808 (2011/2013/2019) terminals, with JT/T 1078 and Jiangsu/Guangdong active-safety items. */
import type { ProtocolModule } from '../../protocol.js';
import { decode } from './decode.js';
import { encodeCommand, relayCheck } from './encode.js';
import { MAX_FRAME_BYTES, splitFrames } from './frame.js';
import { unauthenticatedReply } from './login.js';

export const jt808: ProtocolModule = {
  name: 'jt808',
  maxFrameBytes: MAX_FRAME_BYTES,
  splitFrames: (buf) => splitFrames(buf, MAX_FRAME_BYTES),
  decode,
  // Terminals register (0x0100), then authenticate (0x0102) with the code issued, before any report is stored.
  unauthenticatedReply,
  encodeCommand,
  relayCheck,
};

export { retransmitTimeoutMs } from './retransmit.js';
