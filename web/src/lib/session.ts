// Who is signed in. The session itself is an HttpOnly cookie the page cannot
// read; GET /v1/sessions/current tells who it is and its CSRF token.
import type { Session, SignInRequest } from '../api/session-types';
import { api, call, csrfToken, setCsrfToken } from '../api/client';
import { ApiError } from '../api/problem';
import { createStore } from './store';

export type SessionState =
  | { status: 'loading' }
  | { status: 'signed-out' }
  | { status: 'signed-in'; session: Session };

export const sessionStore = createStore<SessionState>({ status: 'loading' });

// Bumped by every sign-in and sign-out, so that the start-up probe of
// /v1/sessions/current, if it answers after a one-time link has already
// signed in, does not undo that sign-in.
let generation = 0;

function signedIn(session: Session): Session {
  generation += 1;
  setCsrfToken(session.csrf_token);
  sessionStore.set({ status: 'signed-in', session });
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
    if (generation === started) signedIn(session);
  } catch (err) {
    // 401 (no or expired cookie), or a septad without sessions (404).
    if (!(err instanceof ApiError && err.status >= 400 && err.status < 500)) throw err;
    if (generation === started) signedOut();
  }
}

export async function signIn(req: SignInRequest): Promise<Session> {
  return signedIn(await call(api.POST('/v1/sessions', { body: req })));
}

export async function signOut(): Promise<void> {
  try {
    await call(api.DELETE('/v1/sessions/current', { params: { header: { 'X-Septa-CSRF': csrfToken() } } }));
  } finally {
    signedOut();
  }
}
