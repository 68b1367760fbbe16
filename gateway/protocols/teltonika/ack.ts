/** What the server sends a Teltonika device. Fresh buffers each time: callers may keep them. */

/** IMEI packet answer: the device starts sending AVL data. */
export function imeiAccepted(): Buffer {
  return Buffer.from([0x01]);
}

/** IMEI packet answer for an unknown device: it disconnects. */
export function imeiRefused(): Buffer {
  return Buffer.from([0x00]);
}

/** TCP AVL ack: how many records were accepted, u32 BE. Anything short of N1 makes the device resend. */
export function recordCountAck(count: number): Buffer {
  const ack = Buffer.alloc(4);
  ack.writeUInt32BE(count >>> 0, 0);
  return ack;
}

/**
 * UDP AVL ack: u16 length (5) · packet id echoed · 0x01 · AVL packet id echoed · accepted count (1 byte).
 * The device matches it to the datagram by the two ids.
 */
export function udpAck(packetId: number, avlPacketId: number, count: number): Buffer {
  const ack = Buffer.alloc(7);
  ack.writeUInt16BE(5, 0);
  ack.writeUInt16BE(packetId & 0xffff, 2);
  ack[4] = 0x01;
  ack[5] = avlPacketId & 0xff;
  ack[6] = count & 0xff;
  return ack;
}
