/** The coordination a store URL calls for: PostgreSQL's when nodes share one, else none (one machine, or EventStoreDB's static shards). */
import type { Coordination } from './port.js';

export async function openCoordination(storeUrl: string): Promise<Coordination | null> {
  if (!/^postgres(ql)?:\/\//.test(storeUrl)) return null;
  const { openPostgresCoordination } = await import('./postgres.js');
  return openPostgresCoordination(storeUrl);
}
