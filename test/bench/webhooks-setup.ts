/**
 * Creates the webhook bench's customers on the platform's store before it
 * starts (the `customer create` command's work, without a process per
 * customer): `node webhooks-setup.js COUNT PLAN` with the platform's env.
 * Prints one JSON line: [{customer_id, api_key}, ...].
 */
import { systemClock } from '../../core/clock.js';
import { createCustomer } from '../../core/commands/customers.js';
import { loadConfig } from '../../core/config.js';
import { openEventStore } from '../../core/event-store/open.js';
import type { Plan } from '../../core/events.js';

async function main(): Promise<void> {
  const [count, plan] = process.argv.slice(2);
  const store = await openEventStore(loadConfig().store, systemClock);
  const out: Array<{ customer_id: string; api_key: string }> = [];
  try {
    for (let i = 0; i < Number(count); i++) {
      const c = await createCustomer(store, systemClock, { name: `Bench ${i}`, plan: plan as Plan });
      out.push({ customer_id: c.customer_id, api_key: c.api_key });
    }
  } finally {
    await store.close();
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

void main();
