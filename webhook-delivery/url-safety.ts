/**
 * Where a webhook may connect: every address DNS returns for the receiver's
 * name is judged by core/webhook-url.ts's `isForbiddenAddress`, so a name that
 * resolved to a public address at creation and to 127.0.0.1 later (DNS
 * rebinding) is still refused. Node skips `lookup` for IP-literal hosts, which
 * is why post-attempt.ts puts those through this lookup itself.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { isForbiddenAddress } from '../core/webhook-url.js';

/** `err.code` of a lookup refused because an address is not public. */
export const FORBIDDEN_ADDRESS_CODE = 'EWEBHOOKFORBIDDEN';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** The `lookup` option shape of net/http/https requests and agents. */
export type WebhookLookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

function forbiddenError(hostname: string, address: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${address}, which webhooks may not reach`);
  err.code = FORBIDDEN_ADDRESS_CODE;
  return err;
}

/**
 * A `lookup` for webhook requests: resolves every address of the name and
 * refuses the connection (error code EWEBHOOKFORBIDDEN) when any of them is
 * forbidden, so no address family fallback can slip through. Answers in the
 * shape the caller asked for (`all: true` with autoSelectFamily, else one).
 */
export function guardedLookup(allowPrivate: boolean): WebhookLookup {
  return (hostname, options, callback) => {
    const opts: LookupAllOptions = { ...(options ?? {}), all: true };
    dnsLookup(hostname, opts, (err, addresses) => {
      if (err) return callback(err, []);
      if (!allowPrivate) {
        const bad = addresses.find((a) => isForbiddenAddress(a.address));
        if (bad) return callback(forbiddenError(hostname, bad.address), []);
      }
      if (options?.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) {
        const none: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
        none.code = 'ENOTFOUND';
        return callback(none, []);
      }
      callback(null, first.address, first.family);
    });
  };
}
