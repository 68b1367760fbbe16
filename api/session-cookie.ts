/**
 * The panel's session cookie and the CSRF token that goes with it. The token
 * lives only in the `fleet_session` cookie (HttpOnly: page scripts never see
 * it); the CSRF token is an HMAC of it under a server key, which the panel
 * gets in the login answer and sends back as `X-CSRF-Token` on every request
 * that changes something. A cross-site page can make the browser send the
 * cookie but can neither read nor compute the CSRF token.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { SESSION_TTL_MS } from '../core/commands/users.js';

export const SESSION_COOKIE = 'fleet_session';
export const CSRF_HEADER = 'x-csrf-token';

/** Methods that change something: with cookie authentication they need the CSRF header. */
export const STATE_CHANGING_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The session token of a Cookie header, or null. Only this one cookie is read; the first of two with its name wins. */
export function sessionTokenOf(cookieHeader: string | undefined): string | null {
  if (!cookieHeader) return null;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    return value === '' ? null : value;
  }
  return null;
}

/**
 * Secure when the request came over https, or when the public URL is https
 * (a proxy terminated TLS in front of us: the browser still speaks https).
 */
function secure(request: FastifyRequest, publicUrl: string): boolean {
  return request.protocol === 'https' || publicUrl.startsWith('https:');
}

function cookie(value: string, maxAgeS: number, request: FastifyRequest, publicUrl: string): string {
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict${secure(request, publicUrl) ? '; Secure' : ''}; Max-Age=${maxAgeS}`;
}

export function sessionCookie(token: string, request: FastifyRequest, publicUrl: string): string {
  return cookie(token, SESSION_TTL_MS / 1000, request, publicUrl);
}

export function clearedSessionCookie(request: FastifyRequest, publicUrl: string): string {
  return cookie('', 0, request, publicUrl);
}

export function csrfTokenFor(key: Buffer, sessionToken: string): string {
  return createHmac('sha256', key).update(sessionToken).digest('base64url');
}

/** Constant-time comparison of the header a request sent with the token its session gives. */
export function csrfMatches(key: Buffer, sessionToken: string, sent: string | string[] | undefined): boolean {
  if (typeof sent !== 'string') return false;
  const expected = Buffer.from(csrfTokenFor(key, sessionToken));
  const given = Buffer.from(sent);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
