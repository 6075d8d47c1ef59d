// The typed REST client. Every request goes through septaFetch, which adds
// the CSRF header and a person's Septa-Tenant, retries idempotent reads
// while the connection is lost (showing the banner), and sends a 401 back
// to sign-in.
import createClient from 'openapi-fetch';
import type { paths } from './schema';
import { ApiError, NETWORK_STATUS, problemFrom } from './problem';
import { connectionLost } from '../lib/connection';
import { tenantSelector } from '../lib/tenancy';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 5000;

let sessionCsrf = '';
let onUnauthorized: () => void = () => {};
let actingTenant: () => string = () => '';

/** The session's CSRF token, held in memory only (never in storage). */
export function setCsrfToken(token: string): void {
  sessionCsrf = token;
}

export function csrfToken(): string {
  return sessionCsrf;
}

export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

/**
 * The tenant a person acts in at the moment of each request ('' for a
 * token's session or an admin): asked per request, so that a page's first
 * reads already carry the tenant its path or the tab chose.
 */
export function setActingTenant(fn: () => string): void {
  actingTenant = fn;
}

/** Resolves after `ms`, or at once when the browser reports it is online again. */
function retryDelay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      window.removeEventListener('online', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    window.addEventListener('online', done);
  });
}

async function septaFetch(input: Request): Promise<Response> {
  const req = input.clone();
  if (UNSAFE.has(req.method) && sessionCsrf) req.headers.set('X-Septa-CSRF', sessionCsrf);
  const selector = tenantSelector(new URL(req.url).pathname, actingTenant());
  if (selector) req.headers.set('Septa-Tenant', selector);
  let delay = RETRY_FIRST_MS;
  for (;;) {
    let res: Response;
    try {
      res = await fetch(req.clone(), { credentials: 'same-origin' });
    } catch (err) {
      connectionLost.set(true);
      // A write may have reached the server: never resend it blindly.
      if (UNSAFE.has(req.method)) {
        throw new ApiError(NETWORK_STATUS, 'UNAVAILABLE', 'The connection to Septa was lost; the request may not have been carried out.');
      }
      await retryDelay(delay);
      delay = Math.min(delay * 2, RETRY_MAX_MS);
      continue;
    }
    connectionLost.set(false);
    if (res.status === 401 && !new URL(req.url).pathname.startsWith('/v1/sessions')) onUnauthorized();
    return res;
  }
}

export const api = createClient<paths>({ baseUrl: '', fetch: septaFetch });

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The response's data, or an ApiError built from its problem+json. */
export async function call<T>(p: Promise<FetchResult<T>>): Promise<T> {
  const { data, error, response } = await p;
  if (!response.ok) throw problemFrom(response.status, error, response.statusText);
  return data as T;
}

/** Every page of a list (page_size at its maximum). */
export async function listAll<T>(fetchPage: (pageToken: string) => Promise<{ items: T[]; next?: string | undefined }>): Promise<T[]> {
  const all: T[] = [];
  let token = '';
  do {
    const page = await fetchPage(token);
    all.push(...page.items);
    token = page.next ?? '';
  } while (token);
  return all;
}
