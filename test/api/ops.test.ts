import { afterEach, describe, expect, it } from 'vitest';
import { randomUuid } from '../../core/ids.js';
import { streams } from '../../core/streams.js';
import { newStats } from '../../gateway/stats.js';
import type { StoreWriteStatus } from '../../core/event-store/write-health.js';
import { startApiHarness, type ApiHarness, type HarnessOptions } from '../support/api-harness.js';
import { ResponseValidator, expectDocumented, loadOpenApi } from '../support/openapi.js';

let h: ApiHarness;
afterEach(async () => {
  await h.close();
});

async function start(options: HarnessOptions = {}) {
  h = await startApiHarness(options);
}

describe('/healthz and /readyz', () => {
  it('liveness answers ok; readiness reports the store and a caught-up projection runner', async () => {
    await start();
    const live = await h.app.inject({ method: 'GET', url: '/healthz' });
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual({ status: 'ok' });
    await h.newCustomer();
    await h.catchUp();
    const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({
      status: 'ready',
      checks: { store: 'ok', projections: { lag_events: 0, lag_seconds: 0, max_lag_seconds: 30 } },
    });
    expectDocumented(new ResponseValidator(await loadOpenApi(h.app)), 'GET', '/readyz', ready);
  });

  it('is not ready while the read models lag the log beyond the bound', async () => {
    await start({ settings: { readyMaxLagS: 10 } });
    await h.runner.stop();
    // Three events the stopped runner will not apply: CustomerCreated, ApiKeyCreated, ApiKeyRevoked.
    const { customerId } = await h.newCustomer();
    await h.store.appendToStream(streams.tenant(customerId), [
      { id: randomUuid(), type: 'ApiKeyRevoked', data: { customer_id: customerId, key_id: 'key_x', revoked_at: h.clock.now() } },
    ]);
    h.clock.advance(5_000);
    const stillOk = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(stillOk.statusCode).toBe(200);
    expect(stillOk.json().checks.projections).toMatchObject({ lag_events: 3, lag_seconds: 5 });
    h.clock.advance(6_000);
    const lagging = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(lagging.statusCode).toBe(503);
    expect(lagging.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(lagging.json()).toMatchObject({ code: 'not_ready', errors: [{ pointer: '/checks/projections' }] });
    expect(lagging.json().detail).toContain('11.0 s behind');
    expectDocumented(new ResponseValidator(await loadOpenApi(h.app)), 'GET', '/readyz', lagging);
  });

  it('counts the position history, which has a runner of its own, when it is the one behind', async () => {
    await start({ settings: { readyMaxLagS: 10 } });
    await h.history.stop();
    const { customerId } = await h.newCustomer();
    await h.runner.catchUp();
    expect(h.runner.position).not.toBeNull();
    await h.store.appendToStream(streams.tenant(customerId), [
      { id: randomUuid(), type: 'ApiKeyRevoked', data: { customer_id: customerId, key_id: 'key_x', revoked_at: h.clock.now() } },
    ]);
    await h.runner.catchUp();
    h.clock.advance(11_000);
    const lagging = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(lagging.statusCode).toBe(503);
    // The history stopped before the customer was created: CustomerCreated, its ApiKeyCreated and the revocation.
    expect(lagging.json().detail).toContain('(3 events)');
  });

  it('is not ready while the store cannot write, and ready again once it writes', async () => {
    let writes: StoreWriteStatus = { writable: false, code: 'SQLITE_FULL', since: 0 };
    await start({ storeWrites: () => writes, metrics: { storeWrites: () => writes } });
    writes = { ...writes, since: h.clock.now() - 4_000 };
    const full = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(full.statusCode).toBe(503);
    expect(full.json()).toMatchObject({ code: 'not_ready', errors: [{ pointer: '/checks/store', message: 'not_writable' }] });
    expect(full.json().detail).toContain('cannot write (SQLITE_FULL) for 4.0 s');
    expectDocumented(new ResponseValidator(await loadOpenApi(h.app)), 'GET', '/readyz', full);
    expect((await h.app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^fleet_store_writable 0$/m);
    writes = { writable: true, code: null, since: null };
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^fleet_store_writable 1$/m);
  });

  it('is not ready when the store does not answer', async () => {
    await start();
    await h.runner.stop();
    await h.store.close();
    const res = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json().errors).toEqual([{ pointer: '/checks/store', message: 'unreachable' }]);
  });
});

describe('/metrics', () => {
  it('exposes gateway, store, projection and HTTP metrics in the Prometheus text format', async () => {
    const gateway = {
      stats: {
        ...newStats(),
        framesAccepted: 42,
        framesRefused: 3,
        recordsStored: 40,
        connections: 7,
        connectionsRejected: { listener_cap: 0, total_cap: 2, address_cap: 9, address_backoff: 11 },
        loginTimeouts: 4,
        acceptErrors: 1,
        refusals: { jt808: { truncated: 8, junk: 2 }, gt06: { bad_checksum: 3 } },
        closedForRefusals: 1,
      },
      openConnections: 5,
    };
    const appends = { appends: 12, events: 30, failures: 1, failuresByCode: { SQLITE_FULL: 1 } };
    await start({ metrics: { gateway: () => gateway, storeAppends: () => appends } });
    const { apiKey } = await h.newCustomer();
    for (const url of ['/v1/devices', '/v1/devices', '/v1/devices/dev_nope']) {
      await h.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } });
    }
    await h.app.inject({ method: 'GET', url: '/no/such/route' });
    const res = await h.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.body;
    expect(text).toContain('# TYPE fleet_gateway_frames_accepted_total counter');
    expect(text).toMatch(/^fleet_gateway_frames_accepted_total 42$/m);
    expect(text).toMatch(/^fleet_gateway_frames_refused_total 3$/m);
    expect(text).toMatch(/^fleet_gateway_connections_rejected_total\{reason="address_cap"\} 9$/m);
    expect(text).toMatch(/^fleet_gateway_connections_rejected_total\{reason="address_backoff"\} 11$/m);
    expect(text).toMatch(/^fleet_gateway_login_timeouts_total 4$/m);
    expect(text).toMatch(/^fleet_gateway_accept_errors_total 1$/m);
    expect(text).toMatch(/^fleet_gateway_refusals_total\{protocol="jt808",reason="truncated"\} 8$/m);
    expect(text).toMatch(/^fleet_gateway_refusals_total\{protocol="gt06",reason="bad_checksum"\} 3$/m);
    expect(text).toMatch(/^fleet_gateway_connections_closed_for_refusals_total 1$/m);
    expect(text).toMatch(/^fleet_gateway_records_stored_total 40$/m);
    expect(text).toMatch(/^fleet_gateway_open_connections 5$/m);
    expect(text).toMatch(/^fleet_store_appends_total 12$/m);
    expect(text).toMatch(/^fleet_store_appended_events_total 30$/m);
    expect(text).toMatch(/^fleet_store_write_failures_total\{code="SQLITE_FULL"\} 1$/m);
    expect(text).toMatch(/^fleet_projection_lag_events \d+$/m);
    expect(text).toMatch(/^fleet_projection_lag_seconds [\d.]+$/m);
    expect(text).toMatch(/^fleet_store_up 1$/m);
    expect(text).toMatch(/^fleet_http_request_duration_seconds_count\{method="GET",route="\/v1\/devices",status_code="200"\} 2$/m);
    expect(text).toMatch(/^fleet_http_request_duration_seconds_count\{method="GET",route="\/v1\/devices\/:id",status_code="404"\} 1$/m);
    expect(text).toMatch(/route="unmatched",status_code="404"/);
    expect(text).not.toContain('dev_nope');

    // Counters follow their sources between scrapes.
    gateway.stats.framesAccepted = 50;
    expect((await h.app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^fleet_gateway_frames_accepted_total 50$/m);
  });

  it('leaves out what this process does not run', async () => {
    await start();
    const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).not.toContain('fleet_gateway_');
    expect(text).toContain('fleet_projection_lag_seconds');
  });
});
