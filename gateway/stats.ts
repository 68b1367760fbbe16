/** Counters the gateway keeps for logs, benchmarks and /metrics. */
export interface GatewayStats {
  connections: number;
  framesAccepted: number;
  framesRefused: number;
  recordsStored: number;
  bytesSkipped: number;
  unknownDeviceFrames: number;
  appendFailures: number;
}

export function newStats(): GatewayStats {
  return {
    connections: 0,
    framesAccepted: 0,
    framesRefused: 0,
    recordsStored: 0,
    bytesSkipped: 0,
    unknownDeviceFrames: 0,
    appendFailures: 0,
  };
}
