/** Teltonika FMx/GH devices: IMEI login, AVL packets (codecs 8, 8E, 16, 7), codec 12/13/14 messages and commands. */
import type { ProtocolModule } from '../../protocol.js';
import { decode } from './decode.js';
import { encodeCommand, relayCheck } from './encode.js';
import { MAX_FRAME_BYTES, splitFrames } from './frame.js';

export const teltonika: ProtocolModule = {
  name: 'teltonika',
  maxFrameBytes: MAX_FRAME_BYTES,
  splitFrames: (buf) => splitFrames(buf, MAX_FRAME_BYTES),
  decode,
  encodeCommand,
  relayCheck,
};

export { decodeUdp } from './udp.js';
