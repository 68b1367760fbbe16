/**
 * Bad input that Fastify would answer on its own (content types, URLs, HTTP
 * framing, JSON it refuses) or that slips past a regex (impossible dates):
 * every one must leave as problem+json with a code and a useful detail.
 */
import { connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { imeiFrom } from '../../core/imei.js';
import { MAX_BODY_DEPTH } from '../../api/plugins/json-bodies.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';

let h: ApiHarness;
let headers: Record<string, string>;
beforeEach(async () => {
  h = await startApiHarness();
  headers = { authorization: `Bearer ${(await h.newCustomer()).apiKey}` };
});
afterEach(async () => {
  await h.close();
});

const PROBLEM = 'application/problem+json; charset=utf-8';

async function newDevice(): Promise<string> {
  const res = await h.app.inject({ method: 'POST', url: '/v1/devices', headers, payload: { imei: imeiFrom('35693803564380'), model: 'FMB920', name: 'Van 7', group_id: 'north' } });
  expect(res.statusCode).toBe(201);
  return res.json().id as string;
}

describe('content types', () => {
  it('415 for text/plain and other non-JSON bodies, naming what is accepted', async () => {
    const json = JSON.stringify({ imei: imeiFrom('35693803564380'), model: 'FMB920' });
    for (const type of ['text/plain', 'text/plain; charset=utf-8', 'application/xml', 'application/merge-patch+json']) {
      const res = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: { ...headers, 'content-type': type }, payload: json });
      expect(res.statusCode, type).toBe(415);
      expect(res.headers['content-type']).toBe(PROBLEM);
      expect(res.json()).toMatchObject({ status: 415, code: 'unsupported_media_type' });
      expect(res.json().detail).toContain(type.split(';')[0]);
      expect(res.json().detail).toContain('application/json');
    }
    const list = await h.app.inject({ method: 'GET', url: '/v1/devices', headers });
    expect(list.json().data).toEqual([]);
  });

  it('PATCH takes application/merge-patch+json as JSON (null clears), and its 415 names both types', async () => {
    const id = await newDevice();
    const patch = await h.app.inject({
      method: 'PATCH', url: `/v1/devices/${id}`, headers: { ...headers, 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ name: 'Van 7 (north)', group_id: null }),
    });
    expect(patch.statusCode).toBe(200);
    expect(patch.json()).toMatchObject({ id, name: 'Van 7 (north)', group_id: null });
    const invalid = await h.app.inject({
      method: 'PATCH', url: `/v1/devices/${id}`, headers: { ...headers, 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ imei: '1' }),
    });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().errors).toEqual([{ pointer: '/body/imei', message: 'is not an accepted field' }]);

    const plain = await h.app.inject({
      method: 'PATCH', url: `/v1/devices/${id}`, headers: { ...headers, 'content-type': 'text/plain' }, payload: '{"name":"x"}',
    });
    expect(plain.statusCode).toBe(415);
    expect(plain.json().detail).toContain('application/json');
    expect(plain.json().detail).toContain('application/merge-patch+json');
  });
});

describe('JSON bodies', () => {
  it('a __proto__ or constructor.prototype key is refused for safety, saying so, with its pointer', async () => {
    const cases: Array<[string, string]> = [
      [`{"imei":"${imeiFrom('35693803564380')}","model":"FMB920","__proto__":{"admin":true}}`, '/body/__proto__'],
      [`{"imei":"${imeiFrom('35693803564380')}","model":"FMB920","name":{"constructor":{"prototype":{}}}}`, '/body/name/constructor/prototype'],
    ];
    for (const [payload, pointer] of cases) {
      const res = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: { ...headers, 'content-type': 'application/json' }, payload });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toBe(PROBLEM);
      const body = res.json();
      expect(body.code).toBe('invalid_body');
      expect(body.detail).not.toMatch(/not valid JSON/);
      expect(body.detail).toMatch(/refused/);
      expect(body.errors).toEqual([{ pointer, message: expect.stringContaining('prototype') }]);
    }
    const broken = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: { ...headers, 'content-type': 'application/json' }, payload: '{"imei":' });
    expect(broken.statusCode).toBe(400);
    expect(broken.json()).toMatchObject({ code: 'invalid_body', detail: expect.stringMatching(/not valid JSON/) });
  });

  it('a body nested deeper than the limit is a 400 saying so, however deep (a __proto__ at the bottom too), and brackets in strings do not count', async () => {
    for (const depth of [MAX_BODY_DEPTH + 1, 1_000, 10_000, 100_000]) {
      const payload = `{"imei":"${imeiFrom('35693803564380')}","model":"FMB920","name":${'['.repeat(depth)}{"__proto__":{}}${']'.repeat(depth)}}`;
      const res = await h.app.inject({ method: 'POST', url: '/v1/devices', headers: { ...headers, 'content-type': 'application/json' }, payload });
      expect(res.statusCode, `depth ${depth}`).toBe(400);
      expect(res.headers['content-type']).toBe(PROBLEM);
      expect(res.json()).toMatchObject({ code: 'invalid_body', detail: expect.stringContaining(`deeper than ${MAX_BODY_DEPTH} levels`) });
    }
    const bracketsInAString = { imei: imeiFrom('35693803564380'), model: 'FMB920', name: '['.repeat(5_000) + '\\"{' };
    const res = await h.app.inject({ method: 'POST', url: '/v1/devices', headers, payload: bracketsInAString });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).not.toContain('deeper');
    expect(res.json().errors.map((e: { pointer: string }) => e.pointer)).toContain('/body/name');
  });
});

describe('URLs and HTTP framing', () => {
  it('a malformed percent-encoded URL is a problem+json 400', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/v1/devices/%E0%A4%A', headers });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe(PROBLEM);
    expect(res.json()).toMatchObject({ status: 400, code: 'bad_url', request_id: expect.stringMatching(/^req_/) });
    expect(res.json().detail).toContain('percent-encoding');
  });

  it('a body shorter than its Content-Length is a problem+json 400', async () => {
    const res = await h.app.inject({
      method: 'POST', url: '/v1/devices', headers: { ...headers, 'content-type': 'application/json', 'content-length': '100' }, payload: '{}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe(PROBLEM);
    expect(res.json().code).toBe('invalid_body');
  });

  it('a request Node cannot parse (bad Content-Length) is answered with problem+json before the connection closes', async () => {
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const address = h.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write('POST /v1/devices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ten\r\n\r\n{}');
      });
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    const [head, body] = raw.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head!.toLowerCase()).toContain('content-type: application/problem+json');
    expect(JSON.parse(body!)).toMatchObject({ status: 400, code: 'bad_request', title: 'Bad Request' });
  });
});

describe('times', () => {
  it('impossible calendar dates and hour 24 are 400s pointing at the parameter', async () => {
    const id = await newDevice();
    const cases: Array<[string, string]> = [
      ['from=2026-02-30T00:00:00Z', '/query/from'],
      ['from=2026-11-01T00:00:00Z&to=2026-11-31T00:00:00Z', '/query/to'],
      ['from=2025-02-29T00:00:00Z&to=2025-03-01T00:00:00Z', '/query/from'],
      ['from=2026-11-20T24:00:00Z', '/query/from'],
    ];
    for (const [query, pointer] of cases) {
      const res = await h.app.inject({ method: 'GET', url: `/v1/positions?device_id=${id}&${query}`, headers });
      expect(res.statusCode, query).toBe(400);
      expect(res.headers['content-type']).toBe(PROBLEM);
      expect(res.json().code).toBe('validation_failed');
      expect(res.json().errors).toEqual([{ pointer, message: expect.any(String) }]);
    }
    const leapDay = await h.app.inject({ method: 'GET', url: `/v1/positions?device_id=${id}&from=2024-02-29T00:00:00Z&to=2024-03-01T00:00:00%2B02:00`, headers });
    expect(leapDay.statusCode).toBe(200);
    const events = await h.app.inject({ method: 'GET', url: '/v1/events?from=2026-04-31T00:00:00Z', headers });
    expect(events.statusCode).toBe(400);
    expect(events.json().errors[0].pointer).toBe('/query/from');
  });

  it('a naive time, a time without seconds, a leap second and an hour-only offset are 400s at the parameter', async () => {
    const id = await newDevice();
    for (const from of ['2026-11-20T08:00:00', '2026-11-20T08:00Z', '2026-12-31T23:59:60Z', '2026-11-20T08:00:00%2B02']) {
      const res = await h.app.inject({ method: 'GET', url: `/v1/positions?device_id=${id}&from=${from}`, headers });
      expect(res.statusCode, from).toBe(400);
      expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/query/from', message: expect.any(String) }] });
      expect(res.json().errors).toHaveLength(1);
    }
  });
});
