/** One pino logger for the process; modules take a child with their own bindings. */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string = process.env.FLEET_LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { service: 'fleet' } });
}

/** For tests and tools that want silence. */
export const silentLogger: Logger = pino({ level: 'silent' });
