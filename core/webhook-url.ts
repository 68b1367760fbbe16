/**
 * Where a webhook may be sent. Delivering to an integrator-supplied URL makes
 * the server a request proxy, so without the development setting nothing may
 * reach loopback, private networks, link-local (cloud metadata at
 * 169.254.169.254) or other non-public ranges. Checked twice:
 * - at creation (`checkWebhookUrl`, here): scheme, credentials, IP-literal
 *   hosts, reserved names;
 * - at connect time (webhook-delivery/url-safety.ts): every address DNS
 *   returns, judged by `isForbiddenAddress`, so a name rebound to 127.0.0.1
 *   after creation is still refused.
 */
import { BlockList, isIP, isIPv4 } from 'node:net';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

// Ranges that are never a public receiver. Sources: IANA special-purpose registries (RFC 6890 and successors).
const V4_FORBIDDEN: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // unspecified, "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes broadcast 255.255.255.255
];

// IPv6 ranges refused outright. Ranges that embed an IPv4 address (mapped,
// NAT64, 6to4) are not here: they are judged by that IPv4 address.
const V6_FORBIDDEN: ReadonlyArray<readonly [string, number]> = [
  ['::', 96], // unspecified ::, loopback ::1, deprecated IPv4-compatible ::a.b.c.d
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT), never a public destination
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001::', 32], // Teredo tunnels: no receiver lives there, and the path is opaque
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (includes fd00:ec2::254, the AWS metadata address)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const v4List = new BlockList();
for (const [net, prefix] of V4_FORBIDDEN) v4List.addSubnet(net, prefix, 'ipv4');
const v6List = new BlockList();
for (const [net, prefix] of V6_FORBIDDEN) v6List.addSubnet(net, prefix, 'ipv6');

/** The 16 bytes of an IPv6 address (zone id already removed), or null. */
function ipv6Bytes(address: string): Uint8Array | null {
  let text = address;
  const words: number[] = [];
  // A trailing dotted quad stands for the last two 16-bit words.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  let tailWords: number[] = [];
  if (tail.includes('.')) {
    if (!isIPv4(tail)) return null;
    const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number);
    tailWords = [(a << 8) | b, (c << 8) | d];
    text = text.slice(0, lastColon + 1) + '0'; // placeholder word, dropped below
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    for (const w of part.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(w)) return null;
      out.push(parseInt(w, 16));
    }
    return out;
  };
  const head = parse(halves[0] ?? '');
  const rest = halves.length === 2 ? parse(halves[1] ?? '') : [];
  if (!head || !rest) return null;
  if (tailWords.length) (rest.length ? rest : head).pop();
  const explicit = head.length + rest.length + tailWords.length;
  if (halves.length === 2 ? explicit > 7 : explicit !== 8) return null;
  words.push(...head, ...new Array<number>(8 - explicit).fill(0), ...rest, ...tailWords);
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[2 * i] = w >> 8;
    bytes[2 * i + 1] = w & 0xff;
  });
  return bytes;
}

const v4At = (b: Uint8Array, i: number): string => `${b[i]}.${b[i + 1]}.${b[i + 2]}.${b[i + 3]}`;
const zeros = (b: Uint8Array, from: number, to: number): boolean => b.subarray(from, to).every((x) => x === 0);

/** The IPv4 address an IPv6 address stands for (mapped, NAT64 well-known prefix, 6to4), if any. */
function embeddedIPv4(b: Uint8Array): string | null {
  // ::ffff:a.b.c.d
  if (zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return v4At(b, 12);
  // 64:ff9b::a.b.c.d (RFC 6052 well-known prefix)
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(b, 4, 12)) return v4At(b, 12);
  // 2002:aabb:ccdd::/48 (6to4)
  if (b[0] === 0x20 && b[1] === 0x02) return v4At(b, 2);
  return null;
}

/**
 * True when `ip` must not receive webhooks: not a public unicast address.
 * Anything that is not a valid IP address is forbidden too.
 */
export function isForbiddenAddress(ip: string): boolean {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const family = isIP(bare);
  if (family === 4) return v4List.check(bare, 'ipv4');
  if (family !== 6) return true;
  // A zone id ("%eth0") only exists on link-local scopes.
  if (bare.includes('%')) return true;
  const bytes = ipv6Bytes(bare);
  if (!bytes) return true;
  const v4 = embeddedIPv4(bytes);
  if (v4 !== null) return v4List.check(v4, 'ipv4');
  return v6List.check(bare, 'ipv6');
}

export type WebhookUrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

// Names that by convention never leave the local network or resolve to the host itself.
const PRIVATE_SUFFIXES = ['.localhost', '.internal', '.local', '.home.arpa', '.lan'];

/**
 * Validates an endpoint URL at creation. https only; plain http only with
 * `allowPrivate` (the local-development setting: local receivers rarely have
 * certificates). With `allowPrivate` every public-address rule is lifted, the
 * scheme, credential, length and port rules are not.
 */
export function checkWebhookUrl(raw: string, { allowPrivate }: { allowPrivate: boolean }): WebhookUrlCheck {
  if (typeof raw !== 'string' || raw.length === 0) return { ok: false, reason: 'url is required' };
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) {
    return { ok: false, reason: `url is longer than ${MAX_WEBHOOK_URL_LENGTH} characters` };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'url is not a valid absolute URL' };
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowPrivate)) {
    return { ok: false, reason: allowPrivate ? 'url must use http or https' : 'url must use https' };
  }
  // Credentials in the URL would be stored and shown with it; receivers authenticate by our signature.
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'url must not contain credentials' };
  if (url.hostname === '') return { ok: false, reason: 'url must have a host' };
  if (url.port === '0') return { ok: false, reason: 'url port must be between 1 and 65535' };
  if (allowPrivate) return { ok: true, url };

  const host = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
  if (host.startsWith('[') || isIP(host) !== 0) {
    return isForbiddenAddress(host)
      ? { ok: false, reason: 'url host is a private, loopback, link-local or reserved address' }
      : { ok: true, url };
  }
  if (host === 'localhost' || PRIVATE_SUFFIXES.some((s) => host.endsWith(s))) {
    return { ok: false, reason: 'url host is a local or internal name' };
  }
  // A single label ("metadata", "intranet") only resolves through local search domains.
  if (!host.includes('.')) return { ok: false, reason: 'url host must be a fully qualified domain name' };
  return { ok: true, url };
}
