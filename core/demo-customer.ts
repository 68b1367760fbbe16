/**
 * The demo customer a data dir gets on its first start (`npm start` prints its login), kept
 * in `demo-customer.json` beside the log. The platform's start calls this; the rebuild bench
 * calls it too, so its data dir is one that has been started before, as a rebuilt one is.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from './clock.js';
import { createCustomer } from './commands/customers.js';
import { createUser } from './commands/users.js';
import type { EventStore } from './event-store/port.js';
import { generatePassword } from './passwords.js';

/** The demo customer's panel login. */
const DEMO_EMAIL = 'demo@fleet.local';

interface DemoCustomer {
  customer_id: string;
  api_key: string;
  email: string;
  password: string;
}

/** The demo customer, where it is kept, and whether this call created its login (its secrets are printed only then). */
export type DataDirDemo = DemoCustomer & { file: string; createdNow: boolean };

/**
 * On a fresh data dir, creates a demo customer with a panel login and keeps
 * its key and password in a 0600 file. They are printed on that first start
 * only: later starts name the file, so the secrets do not land in every log
 * that captures stdout. A data dir from before the panel gets its demo login
 * on the next start (printed then, once).
 */
export async function ensureDemoCustomer(dataDir: string, store: EventStore): Promise<DataDirDemo> {
  const file = join(dataDir, 'demo-customer.json');
  const write = (demo: DemoCustomer) => writeFileSync(file, JSON.stringify(demo, null, 2) + '\n', { mode: 0o600 });
  const password = generatePassword();
  if (existsSync(file)) {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as Partial<DemoCustomer> & { customer_id: string; api_key: string };
    if (kept.email && kept.password) return { ...(kept as DemoCustomer), file, createdNow: false };
    await createUser(store, systemClock, { customer_id: kept.customer_id, email: DEMO_EMAIL, name: 'Demo user', password });
    const demo = { customer_id: kept.customer_id, api_key: kept.api_key, email: DEMO_EMAIL, password };
    write(demo);
    return { ...demo, file, createdNow: true };
  }
  const created = await createCustomer(store, systemClock, {
    name: 'Demo Fleet',
    plan: 'pro',
    first_user: { email: DEMO_EMAIL, name: 'Demo user', password },
  });
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const demo = { customer_id: created.customer_id, api_key: created.api_key, email: DEMO_EMAIL, password };
  write(demo);
  return { ...demo, file, createdNow: true };
}
