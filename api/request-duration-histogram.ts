/**
 * The HTTP request duration histogram, as a prom-client custom metric.
 *
 * prom-client's Histogram validates and hashes the label set on every
 * observation, which cost more than some of the requests it measured. Here a
 * request adds to plain counters found by one Map lookup; the exposition
 * format (cumulative `_bucket` lines with `le`, `_sum`, `_count`) is built
 * only when /metrics is scraped.
 */
import type { Registry } from 'prom-client';

interface Series {
  labels: { method: string; route: string; status_code: string };
  /** Observations per bucket (not cumulative); the last slot counts those above every bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

interface ExportedValue {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

export class RequestDurationHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    /** Upper bounds in seconds, ascending. */
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    // prom-client's registry accepts any object with the metric interface (name, help, type, get()).
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  observe(method: string, route: string, statusCode: number, seconds: number): void {
    const key = `${method} ${statusCode} ${route}`;
    let s = this.series.get(key);
    if (!s) {
      s = { labels: { method, route, status_code: String(statusCode) }, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]!) i++;
    s.counts[i]!++;
    s.sum += seconds;
    s.count++;
  }

  /** The values in prom-client's shape, which its registry renders. */
  get(): { name: string; help: string; type: string; aggregator: string; values: ExportedValue[] } {
    const values: ExportedValue[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
  }
}
