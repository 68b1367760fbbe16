import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestDurationHistogram } from '../../api/request-duration-histogram.js';

describe('request duration histogram', () => {
  it('renders cumulative buckets, sum and count per method, route and status', async () => {
    const registry = new Registry();
    const h = new RequestDurationHistogram('t_duration_seconds', 'test', [0.001, 0.01, 0.1], registry);
    h.observe('GET', '/v1/devices', 200, 0.0005);
    h.observe('GET', '/v1/devices', 200, 0.001); // on a bound: counted in that bucket (le)
    h.observe('GET', '/v1/devices', 200, 0.05);
    h.observe('GET', '/v1/devices', 200, 3);
    h.observe('GET', '/v1/devices/:id', 404, 0.002);
    const text = await registry.metrics();
    const labels = 'method="GET",route="/v1/devices",status_code="200"';
    expect(text).toContain('# TYPE t_duration_seconds histogram');
    expect(text).toContain(`t_duration_seconds_bucket{${labels},le="0.001"} 2`);
    expect(text).toContain(`t_duration_seconds_bucket{${labels},le="0.01"} 2`);
    expect(text).toContain(`t_duration_seconds_bucket{${labels},le="0.1"} 3`);
    expect(text).toContain(`t_duration_seconds_bucket{${labels},le="+Inf"} 4`);
    expect(text).toContain(`t_duration_seconds_sum{${labels}} 3.0515`);
    expect(text).toContain(`t_duration_seconds_count{${labels}} 4`);
    expect(text).toContain('t_duration_seconds_bucket{method="GET",route="/v1/devices/:id",status_code="404",le="0.001"} 0');
    expect(text).toContain('t_duration_seconds_count{method="GET",route="/v1/devices/:id",status_code="404"} 1');
  });

  it('starts empty again after a registry reset', async () => {
    const registry = new Registry();
    const h = new RequestDurationHistogram('t_duration_seconds', 'test', [0.1], registry);
    h.observe('GET', '/x', 200, 0.01);
    registry.resetMetrics();
    expect(await registry.metrics()).not.toContain('t_duration_seconds_count');
  });
});
