/**
 * How long the platform waits for a terminal's answer before sending a command again. The
 * standard grows the timeout with each try: T(n+1) = T(n) × (n+1), from T(1) = the base
 * (its parameter 0x0002, TCP answer timeout), so T(n) = base × n!.
 */
export function retransmitTimeoutMs(attempt: number, baseMs: number): number {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a whole number from 1, not ${attempt}`);
  if (!(baseMs > 0) || !Number.isFinite(baseMs)) throw new RangeError(`base timeout must be a positive number of ms, not ${baseMs}`);
  let timeout = baseMs;
  for (let n = 1; n < attempt; n++) timeout *= n + 1;
  return timeout;
}
