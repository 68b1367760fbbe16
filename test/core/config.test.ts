import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, storeForDisplay } from '../../core/config.js';
import { imeiFrom, isValidImei } from '../../core/imei.js';
import { contentUuid, newId } from '../../core/ids.js';

describe('configuration from the environment', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ httpPort: 3000, teltonikaPort: 5027, gt06Port: 5023, jt808Port: 5015, offlineAfterS: 600 });
    expect(c.store).toMatch(/^sqlite:.*data\/events\.sqlite$/);
  });

  it('takes the public URL from FLEET_PUBLIC_URL, else localhost on the HTTP port', () => {
    expect(loadConfig({}).publicUrl).toBe('http://localhost:3000');
    expect(loadConfig({ FLEET_HTTP_PORT: '8080' }).publicUrl).toBe('http://localhost:8080');
    expect(loadConfig({ FLEET_PUBLIC_URL: 'https://api.fleet.example/', FLEET_HTTP_PORT: '8080' }).publicUrl).toBe('https://api.fleet.example');
    expect(loadConfig({ FLEET_PUBLIC_URL: 'https://gw.example.com/fleet/' }).publicUrl).toBe('https://gw.example.com/fleet');
    for (const bad of ['api.fleet.example', 'ftp://api.fleet.example', 'https://api.fleet.example/?x=1', 'https://u:p@api.fleet.example']) {
      expect(() => loadConfig({ FLEET_PUBLIC_URL: bad }), bad).toThrow(/FLEET_PUBLIC_URL/);
    }
  });

  it('takes the panel tile URL and attribution, null when unset; refuses a tile URL that is not http(s)', () => {
    expect(loadConfig({})).toMatchObject({ panelTileUrl: null, panelTileAttribution: null });
    const c = loadConfig({ FLEET_PANEL_TILE_URL: 'https://{s}.tile.example.org/{z}/{x}/{y}.png', FLEET_PANEL_TILE_ATTRIBUTION: '© Example' });
    expect(c).toMatchObject({ panelTileUrl: 'https://{s}.tile.example.org/{z}/{x}/{y}.png', panelTileAttribution: '© Example' });
    for (const bad of ['tile.example.org/{z}/{x}/{y}.png', 'ftp://tile.example.org/{z}.png', 'https://u:p@tile.example.org/{z}.png']) {
      expect(() => loadConfig({ FLEET_PANEL_TILE_URL: bad }), bad).toThrow(/FLEET_PANEL_TILE_URL/);
    }
  });

  it('refuses bad values with a message naming the variable', () => {
    expect(() => loadConfig({ FLEET_HTTP_PORT: 'abc' })).toThrow(ConfigError);
    expect(() => loadConfig({ FLEET_HTTP_PORT: '70000' })).toThrow(/FLEET_HTTP_PORT/);
    expect(() => loadConfig({ FLEET_STORE: 'mysql://x' })).toThrow(/FLEET_STORE/);
    expect(() => loadConfig({ FLEET_STORE: 'mysql://u:secret@x/db' })).toThrow(/mysql:\/\/u:\*\*\*@x\/db/);
  });

  it('takes the reverse proxies to trust as addresses or CIDR ranges, and nothing looser', () => {
    expect(loadConfig({}).trustProxy).toEqual([]);
    expect(loadConfig({ FLEET_TRUST_PROXY: '10.0.0.5, 192.168.1.0/24,::1' }).trustProxy).toEqual(['10.0.0.5', '192.168.1.0/24', '::1']);
    for (const bad of ['true', '*', 'proxy.example', '10.0.0.0/8/1']) {
      expect(() => loadConfig({ FLEET_TRUST_PROXY: bad }), bad).toThrow(/FLEET_TRUST_PROXY/);
    }
  });

  it('takes PostgreSQL URLs as the store, and prints them with the password masked', () => {
    for (const url of ['postgres://fleet:pw@db.example:5432/fleet', 'postgresql://fleet@db.example/fleet?sslmode=require']) {
      expect(loadConfig({ FLEET_STORE: url }).store).toBe(url);
    }
    expect(storeForDisplay('postgres://fleet:s3cr:et@db.example:5432/fleet')).toBe('postgres://fleet:***@db.example:5432/fleet');
    expect(storeForDisplay('postgresql://fleet@db.example/fleet')).toBe('postgresql://fleet@db.example/fleet');
    expect(storeForDisplay('sqlite:/data/events.sqlite')).toBe('sqlite:/data/events.sqlite');
  });

  it('takes static webhook shards on EventStoreDB only: nodes on PostgreSQL share delivery by leases', () => {
    expect(loadConfig({ FLEET_STORE: 'esdb://db.example:2113', FLEET_WEBHOOK_SHARD: '1/2' }).webhookShard).toEqual({ index: 1, count: 2 });
    expect(() => loadConfig({ FLEET_STORE: 'postgres://fleet@db.example/fleet', FLEET_WEBHOOK_SHARD: '1/2' })).toThrow(/FLEET_WEBHOOK_SHARD.*leases/);
  });
});

describe('ids', () => {
  it('sort by creation time and carry their prefix', () => {
    const a = newId('dev', 1_700_000_000_000);
    const b = newId('dev', 1_700_000_000_001);
    expect(a).toMatch(/^dev_[0-9a-z]{26}$/);
    expect(a < b).toBe(true);
  });

  it('content UUIDs are stable and differ with content', () => {
    const x = contentUuid('position', 'dev_1', Buffer.from([1, 2, 3]));
    expect(x).toBe(contentUuid('position', 'dev_1', Buffer.from([1, 2, 3])));
    expect(x).not.toBe(contentUuid('position', 'dev_2', Buffer.from([1, 2, 3])));
    expect(x).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('IMEI', () => {
  it('checks the Luhn digit', () => {
    expect(isValidImei('356938035643809')).toBe(true);
    expect(isValidImei('356938035643808')).toBe(false);
    expect(isValidImei('35693803564380')).toBe(false);
    expect(isValidImei(imeiFrom('49015420323751'))).toBe(true);
    expect(imeiFrom('49015420323751')).toBe('490154203237518');
  });
});
