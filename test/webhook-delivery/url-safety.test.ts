import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkWebhookUrl, isForbiddenAddress } from '../../core/webhook-url.js';
import { FORBIDDEN_ADDRESS_CODE, guardedLookup } from '../../webhook-delivery/url-safety.js';

describe('isForbiddenAddress', () => {
  const forbidden = [
    '0.0.0.0',
    '0.1.2.3',
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    '100.127.255.255',
    '169.254.169.254',
    '169.254.0.1',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '240.0.0.1',
    '198.18.0.1',
    '198.19.255.255',
    '192.0.2.10',
    '::',
    '::1',
    '[::1]',
    'fc00::1',
    'fd00:ec2::254',
    'fe80::1',
    'febf:ffff::1',
    'fe80::1%eth0',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.1.2.3',
    '::ffff:169.254.169.254',
    '0:0:0:0:0:ffff:c0a8:0101',
    '64:ff9b::127.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::1',
    '2002:a9fe:a9fe::',
    '2001:db8::1',
    '::127.0.0.1',
    'not-an-ip',
    '',
    '1.2.3',
  ];
  const allowed = [
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.255.255',
    '198.17.255.255',
    '198.20.0.1',
    '11.0.0.1',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:81c::200e',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
  ];
  it.each(forbidden)('refuses %s', (ip) => expect(isForbiddenAddress(ip)).toBe(true));
  it.each(allowed)('allows %s', (ip) => expect(isForbiddenAddress(ip)).toBe(false));
});

describe('checkWebhookUrl', () => {
  const refused = (raw: string, allowPrivate = false): string => {
    const r = checkWebhookUrl(raw, { allowPrivate });
    expect(r.ok).toBe(false);
    return r.ok ? '' : r.reason;
  };

  it('accepts a public https URL with a port, path and query', () => {
    const r = checkWebhookUrl('https://hooks.example.com:8443/fleet?x=1', { allowPrivate: false });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.url.port).toBe('8443');
  });

  it('requires https, unless private targets are allowed', () => {
    expect(refused('http://hooks.example.com/')).toMatch(/https/);
    expect(checkWebhookUrl('http://hooks.example.com/', { allowPrivate: true }).ok).toBe(true);
    expect(refused('ftp://hooks.example.com/', true)).toMatch(/http/);
    expect(refused('file:///etc/passwd', true)).toMatch(/http/);
    expect(refused('javascript:alert(1)')).toMatch(/https/);
  });

  it('refuses credentials, garbage, empty and over-long URLs, even with allowPrivate', () => {
    expect(refused('https://user:pw@hooks.example.com/', true)).toMatch(/credentials/);
    expect(refused('https://user@hooks.example.com/', true)).toMatch(/credentials/);
    expect(refused('not a url', true)).toMatch(/valid/);
    expect(refused('', true)).toMatch(/required/);
    expect(refused(`https://hooks.example.com/${'a'.repeat(2048)}`, true)).toMatch(/2048/);
    expect(refused('https://hooks.example.com:0/', true)).toMatch(/port/);
  });

  it('refuses IP-literal hosts in forbidden ranges, in any spelling the URL parser accepts', () => {
    for (const raw of [
      'https://127.0.0.1/',
      'https://2130706433/',
      'https://0x7f.1/',
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.5:8443/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[fd00::1]/',
      'https://0.0.0.0/',
    ]) {
      expect(refused(raw), raw).toMatch(/address/);
      expect(checkWebhookUrl(raw, { allowPrivate: true }).ok, raw).toBe(true);
    }
    expect(checkWebhookUrl('https://8.8.8.8/', { allowPrivate: false }).ok).toBe(true);
    expect(checkWebhookUrl('https://[2606:4700:4700::1111]/', { allowPrivate: false }).ok).toBe(true);
  });

  it('refuses local and internal names and single labels unless allowPrivate', () => {
    for (const raw of [
      'https://localhost/',
      'https://LOCALHOST./',
      'https://api.localhost/',
      'https://metadata.google.internal/',
      'https://printer.local/',
      'https://metadata/',
    ]) {
      expect(refused(raw), raw).toMatch(/name/);
      expect(checkWebhookUrl(raw, { allowPrivate: true }).ok, raw).toBe(true);
    }
  });
});

describe('guardedLookup on a real request', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end('reached'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const get = (allowPrivate: boolean) =>
    new Promise<{ status?: number; body?: string; code?: string }>((resolve) => {
      const req = request({ host: 'localhost', port, path: '/', lookup: guardedLookup(allowPrivate) }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve({ code: err.code }));
      req.end();
    });

  it('refuses a name resolving to loopback with EWEBHOOKFORBIDDEN', async () => {
    expect(await get(false)).toEqual({ code: FORBIDDEN_ADDRESS_CODE });
  });

  it('reaches the local server when private targets are allowed', async () => {
    expect(await get(true)).toEqual({ status: 200, body: 'reached' });
  });

  it('answers a single address when the caller does not ask for all', async () => {
    const result = await new Promise<{ address: unknown; family: unknown }>((resolve, reject) =>
      guardedLookup(true)('localhost', { family: 4 }, (err, address, family) =>
        err ? reject(err) : resolve({ address, family }),
      ),
    );
    expect(result).toEqual({ address: '127.0.0.1', family: 4 });
  });

  it('passes DNS failures through', async () => {
    const code = await new Promise<string | undefined>((resolve) =>
      guardedLookup(false)('no-such-host.invalid', { all: true }, (err) => resolve(err?.code)),
    );
    expect(code).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });
});
