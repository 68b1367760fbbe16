/**
 * Prometheus metrics for /metrics. A registry per app (not prom-client's
 * global one), so several apps in one process (tests) do not collide.
 * Counters owned by other roles (gateway, store) are read from the injected
 * sources at scrape time; the request histogram is fed by an onResponse hook.
 */
import type { FastifyInstance, onResponseHookHandler } from 'fastify';
import { Counter, Gauge, Registry } from 'prom-client';
import type { MetricsSources, ProjectionsView } from './context.js';
import { RequestDurationHistogram } from './request-duration-histogram.js';

export interface ApiMetrics {
  registry: Registry;
  /** Brings the sourced values up to date, then renders the text exposition format. */
  render(): Promise<string>;
}

/** A counter mirroring a monotonic value kept elsewhere. */
function mirroredCounter(registry: Registry, name: string, help: string) {
  const counter = new Counter({ name, help, registers: [registry] });
  return (value: number) => {
    counter.reset();
    counter.inc(value);
  };
}

/** A labelled counter mirroring monotonic values kept elsewhere: one series per entry. */
function mirroredLabelledCounter<L extends string>(registry: Registry, name: string, help: string, labelNames: L[]) {
  const counter = new Counter({ name, help, labelNames, registers: [registry] });
  return (series: Array<{ labels: Record<L, string>; value: number }>) => {
    counter.reset();
    for (const { labels, value } of series) counter.inc(labels, value);
  };
}

/** `{ a: 1 }` as series labelled `label="a"`. */
function byLabel<L extends string>(label: L, values: Record<string, number>) {
  return Object.entries(values).map(([key, value]) => ({ labels: { [label]: key } as Record<L, string>, value }));
}

export function createMetrics(app: FastifyInstance, projections: ProjectionsView, sources: MetricsSources = {}): ApiMetrics {
  const registry = new Registry();
  const duration = new RequestDurationHistogram(
    'fleet_http_request_duration_seconds',
    'HTTP request duration by route template and status',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registry,
  );
  // Labelled by route template, never the raw URL (ids in label values would explode the series count).
  // Each route observes through its own hook, which knows its template without reading
  // `request.routeOptions` (a new object per read); requests that matched no route through a global one.
  app.addHook('onRoute', (route) => {
    const template = route.url;
    const own: onResponseHookHandler[] = route.onResponse ? [route.onResponse].flat() : [];
    const observe: onResponseHookHandler = (request, reply, done) => {
      duration.observe(request.method, template, reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
    route.onResponse = [...own, observe];
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) duration.observe(request.method, 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  const lagEvents = new Gauge({
    name: 'fleet_projection_lag_events',
    help: 'Events stored but not yet in the read models (counted up to 1000)',
    registers: [registry],
  });
  const lagSeconds = new Gauge({
    name: 'fleet_projection_lag_seconds',
    help: 'Age of the oldest event not yet in the read models',
    registers: [registry],
  });
  const storeUp = new Gauge({ name: 'fleet_store_up', help: '1 when the event store answered the last scrape', registers: [registry] });

  const gateway = sources.gateway
    ? {
        accepted: mirroredCounter(registry, 'fleet_gateway_frames_accepted_total', 'Device frames decoded and accepted'),
        refused: mirroredCounter(registry, 'fleet_gateway_frames_refused_total', 'Device frames refused (bad checksum, unknown device, ...)'),
        stored: mirroredCounter(registry, 'fleet_gateway_records_stored_total', 'Device records durably stored'),
        accepts: mirroredCounter(registry, 'fleet_gateway_connections_accepted_total', 'Device connections accepted'),
        open: new Gauge({ name: 'fleet_gateway_open_connections', help: 'Open device connections', registers: [registry] }),
        rejected: mirroredLabelledCounter(
          registry,
          'fleet_gateway_connections_rejected_total',
          'Device connections closed at accept by a cap (listener_cap, total_cap, address_cap, address_backoff)',
          ['reason'],
        ),
        refusals: mirroredLabelledCounter(
          registry,
          'fleet_gateway_refusals_total',
          'Refused device input by protocol and reason (a DecodeError code, junk, unframeable, no_login, unknown_device, ...)',
          ['protocol', 'reason'],
        ),
        closedForRefusals: mirroredCounter(
          registry,
          'fleet_gateway_connections_closed_for_refusals_total',
          'Device connections closed after a run of refused input',
        ),
        loginTimeouts: mirroredCounter(registry, 'fleet_gateway_login_timeouts_total', 'Connections closed for not logging in by the deadline'),
        acceptErrors: mirroredCounter(registry, 'fleet_gateway_accept_errors_total', 'Failed accepts on the device listeners (EMFILE, ENFILE, ...)'),
        replaced: mirroredCounter(
          registry,
          'fleet_gateway_connections_replaced_total',
          'Device connections closed because a newer connection of the same device logged in (device.connection_replaced)',
        ),
        connectionEventsSuppressed: mirroredCounter(
          registry,
          'fleet_gateway_connection_events_suppressed_total',
          'Connection events not written: connected/disconnected pairs of quick redials, replacements past the per-device limit',
        ),
        connectionEventsDeferred: mirroredCounter(
          registry,
          'fleet_gateway_connection_events_deferred_total',
          'Connection event writes that waited for the shared budget',
        ),
        deviceEventsSuppressed: mirroredLabelledCounter(
          registry,
          'fleet_gateway_device_events_suppressed_total',
          'Events about refused devices not written because the shared budget was spent (unknown_device, login_refused)',
          ['kind'],
        ),
        authCodesIssued: mirroredCounter(registry, 'fleet_gateway_auth_codes_issued_total', 'JT/T 808 auth codes issued at registration'),
      }
    : null;
  const store = sources.storeAppends
    ? {
        appends: mirroredCounter(registry, 'fleet_store_appends_total', 'Event store appends (appendToStream calls that succeeded)'),
        events: mirroredCounter(registry, 'fleet_store_appended_events_total', 'Events in successful appends'),
        failures: mirroredCounter(registry, 'fleet_store_append_failures_total', 'Appends that failed (conflicts included)'),
        byCode: mirroredLabelledCounter(
          registry,
          'fleet_store_write_failures_total',
          'Appends the store could not write, by code (SQLITE_FULL, SQLITE_READONLY, SQLITE_IOERR_*, WRITER_EXITED, ...)',
          ['code'],
        ),
      }
    : null;
  const storeWritable = sources.storeWrites
    ? new Gauge({ name: 'fleet_store_writable', help: '0 from a failed write until an append or a probe commits again, else 1', registers: [registry] })
    : null;

  return {
    registry,
    async render() {
      try {
        const lag = await projections.lag();
        lagEvents.set(lag.events);
        lagSeconds.set(lag.seconds);
        storeUp.set(1);
      } catch {
        storeUp.set(0);
      }
      const reading = sources.gateway?.();
      if (gateway && reading) {
        const s = reading.stats;
        gateway.accepted(s.framesAccepted);
        gateway.refused(s.framesRefused);
        gateway.stored(s.recordsStored);
        gateway.accepts(s.connections);
        gateway.open.set(reading.openConnections);
        gateway.rejected(byLabel('reason', s.connectionsRejected));
        gateway.refusals(
          Object.entries(s.refusals).flatMap(([protocol, reasons]) =>
            Object.entries(reasons).map(([reason, value]) => ({ labels: { protocol, reason }, value })),
          ),
        );
        gateway.closedForRefusals(s.closedForRefusals);
        gateway.loginTimeouts(s.loginTimeouts);
        gateway.acceptErrors(s.acceptErrors);
        gateway.replaced(s.connectionsReplaced);
        gateway.connectionEventsSuppressed(s.connectionEventsSuppressed);
        gateway.connectionEventsDeferred(s.connectionEventsDeferred);
        gateway.deviceEventsSuppressed(byLabel('kind', s.deviceEventsSuppressed));
        gateway.authCodesIssued(s.authCodesIssued);
      }
      if (store && sources.storeAppends) {
        const s = sources.storeAppends();
        store.appends(s.appends);
        store.events(s.events);
        store.failures(s.failures);
        store.byCode(byLabel('code', s.failuresByCode ?? {}));
      }
      if (storeWritable && sources.storeWrites) storeWritable.set(sources.storeWrites().writable ? 1 : 0);
      return registry.metrics();
    },
  };
}
