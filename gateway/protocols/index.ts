/** Every protocol the gateway speaks. */
import type { ProtocolModule, ProtocolName } from '../protocol.js';
import { gt06 } from './gt06/index.js';
import { jt808 } from './jt808/index.js';
import { teltonika } from './teltonika/index.js';

export const protocols: Record<ProtocolName, ProtocolModule> = { teltonika, gt06, jt808 };
