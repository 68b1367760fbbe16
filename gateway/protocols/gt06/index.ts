/** Concox / Jimi GT06 family (GT06N, GT800, JM-VL01/VL103, WeTrack, JC100…). */
import type { ProtocolModule } from '../../protocol.js';
import { decode } from './decode.js';
import { encodeCommand, relayCheck } from './encode.js';
import { MAX_FRAME_BYTES, splitFrames } from './frame.js';

export const gt06: ProtocolModule = {
  name: 'gt06',
  maxFrameBytes: MAX_FRAME_BYTES,
  splitFrames: (buf) => splitFrames(buf, MAX_FRAME_BYTES),
  decode,
  encodeCommand,
  relayCheck,
};
