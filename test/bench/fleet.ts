/** The simulated fleet the ingest bench registers (server process) and drives (client process). */
import type { ProtocolName } from '../../gateway/protocol.js';

/** One simulator seed per protocol: device identities derive from it on both sides. */
export const BENCH_SEEDS: Record<ProtocolName, number> = { teltonika: 101, gt06: 102, jt808: 103 };
export const BENCH_PROTOCOLS: ProtocolName[] = ['teltonika', 'gt06', 'jt808'];
