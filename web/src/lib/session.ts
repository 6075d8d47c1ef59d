// Who is signed in. The session itself is an HttpOnly cookie the page cannot
// read; GET /v1/sessions/current tells who it is and its CSRF token, and for
// a person GET /v1/caller the tenants it may choose.
import type { Caller, Session, SignInRequest } from '../api/session-types';
import { api, call, csrfToken, setCsrfToken } from '../api/client';
import { ApiError } from '../api/problem';
import { createStore } from './store';

export type SessionState =
  | { status: 'loading' }
  | { status: 'signed-out' }
  | { status: 'signed-in'; session: Session; caller?: Caller | undefined };

export const sessionStore = createStore<SessionState>({ status: 'loading' });

// Bumped by every sign-in and sign-out, so that the start-up probe of
// /v1/sessions/current, if it answers after a one-time link has already
// signed in, does not undo that sign-in.
let generation = 0;

function signedIn(session: Session, caller?: Caller): Session {
  generation += 1;
  setCsrfToken(session.csrf_token);
  sessionStore.set({ status: 'signed-in', session, caller });
  return session;
}

export function signedOut(): void {
  generation += 1;
  setCsrfToken('');
  sessionStore.set({ status: 'signed-out' });
}

export async function loadSession(): Promise<void> {
  const started = generation;
  try {
    const session = await call(api.GET('/v1/sessions/current'));
    // A person's tenants come from its memberships, read now (a change
    // shows at the next page load, as septad applies it at the next request).
    const caller = session.kind === 'person' ? await call(api.GET('/v1/caller')) : undefined;
    if (generation === started) signedIn(session, caller);
  } catch (err) {
    // 401 (no or expired cookie), or a septad without sessions (404).
    if (!(err instanceof ApiError && err.status >= 400 && err.status < 500)) throw err;
    if (generation === started) signedOut();
  }
}

export async function signIn(req: SignInRequest): Promise<Session> {
  return signedIn(await call(api.POST('/v1/sessions', { body: req })));
}

/**
 * Ends the session; for a person, the identity provider's end-session URL
 * to go to next (its session ends there too), when it has one.
 */
export async function signOut(): Promise<string | undefined> {
  try {
    const ended = await call(api.DELETE('/v1/sessions/current', { params: { header: { 'X-Septa-CSRF': csrfToken() } } }));
    return ended?.end_session_url;
  } finally {
    forgetTenant();
    signedOut();
  }
}

// The tenant a person chose, for this tab only (sessionStorage: a name, no
// credential), so that a reload or a new page keeps it.
const TENANT_KEY = 'septa.tenant';

export function rememberedTenant(): string | null {
  return sessionStorage.getItem(TENANT_KEY);
}

export function rememberTenant(tenant: string): void {
  sessionStorage.setItem(TENANT_KEY, tenant);
}

function forgetTenant(): void {
  sessionStorage.removeItem(TENANT_KEY);
}
