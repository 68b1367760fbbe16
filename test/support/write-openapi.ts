/**
 * Writes the OpenAPI document of a freshly built app to a file (for
 * `npm run lint:openapi`, which runs redocly on it):
 *   node dist/test/support/write-openapi.js [out.json]
 */
import { writeFileSync } from 'node:fs';
import { startApiHarness } from './api-harness.js';

const out = process.argv[2] ?? 'dist/openapi.json';
const h = await startApiHarness({ settings: { publicUrl: process.env.FLEET_PUBLIC_URL ?? 'https://api.fleet.example' } });
try {
  const res = await h.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  if (res.statusCode !== 200) throw new Error(`GET /v1/openapi.json answered ${res.statusCode}`);
  writeFileSync(out, JSON.stringify(res.json(), null, 2) + '\n');
  process.stdout.write(`wrote ${out}\n`);
} finally {
  await h.close();
}
