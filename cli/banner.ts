/** What `fleet start` prints once the platform runs: where to reach it, and the demo customer's logins. */
import { storeForDisplay, type Config } from '../core/config.js';
import type { DataDirDemo } from '../core/demo-customer.js';

export interface BannerFacts {
  ports: { http: number | null; teltonika: number | null; gt06: number | null; jt808: number | null };
  /** Whether this process delivers webhooks. */
  webhooks: boolean;
  demo: DataDirDemo | null;
}

/** The banner's panel line: the demo login's password on the start that created it, else where it is kept. */
function panelLine(port: number, demo: DataDirDemo | null): string {
  const url = `http://localhost:${port}/`;
  if (!demo) return `  Panel:       ${url}`;
  return demo.createdNow
    ? `  Panel:       ${url}  (log in as ${demo.email} / ${demo.password})`
    : `  Panel:       ${url}  (log in as ${demo.email}; the password is kept in ${demo.file})`;
}

export function startBanner(config: Config, { ports, webhooks, demo }: BannerFacts): string {
  const lines = [
    '',
    'Fleet platform is running',
    `  store:       ${storeForDisplay(config.store)}`,
    ports.http !== null ? `  REST API:    http://localhost:${ports.http}/v1  (health: /healthz)` : null,
    ports.http !== null ? panelLine(ports.http, demo) : null,
    ports.teltonika !== null ? `  Teltonika:   tcp://localhost:${ports.teltonika}` : null,
    ports.gt06 !== null ? `  GT06:        tcp://localhost:${ports.gt06}` : null,
    ports.jt808 !== null ? `  JT/T 808:    tcp://localhost:${ports.jt808}` : null,
    webhooks
      ? `  Webhooks:    delivering${config.allowPrivateWebhookUrls ? ' (private and plain-http URLs allowed: FLEET_WEBHOOK_ALLOW_PRIVATE)' : ''}; manage them at /v1/webhooks`
      : null,
    demo ? `  Demo customer ${demo.customer_id}` : null,
    demo?.createdNow ? `  Log in with:  Authorization: Bearer ${demo.api_key}  (shown on this first start only, like the panel password; kept in ${demo.file})` : null,
    demo?.createdNow ? `  Try:          curl -H "Authorization: Bearer ${demo.api_key}" http://localhost:${ports.http}/v1/positions/latest` : null,
    demo && !demo.createdNow ? `  Log in with the demo API key and panel password kept in ${demo.file} (readable by you only)` : null,
    '',
  ].filter((l): l is string => l !== null);
  return lines.join('\n') + '\n';
}
