// Who is signed in. The session itself is an HttpOnly cookie the page cannot
// read; GET /v1/sessions/current tells who it is and its CSRF token.
import type { Session, SignInRequest } from '../api/session-types';
import { callJson, setCsrfToken } from '../api/client';
import { ApiError } from '../api/problem';
import { createStore } from './store';

export type SessionState =
  | { status: 'loading' }
  | { status: 'signed-out' }
  | { status: 'signed-in'; session: Session };

export const sessionStore = createStore<SessionState>({ status: 'loading' });

function signedIn(session: Session): Session {
  setCsrfToken(session.csrf_token);
  sessionStore.set({ status: 'signed-in', session });
  return session;
}

export function signedOut(): void {
  setCsrfToken('');
  sessionStore.set({ status: 'signed-out' });
}

export async function loadSession(): Promise<void> {
  try {
    signedIn(await callJson<Session>('GET', '/v1/sessions/current'));
  } catch (err) {
    // 401 (no or expired cookie), or a septad without sessions (404).
    if (err instanceof ApiError && err.status >= 400 && err.status < 500) signedOut();
    else throw err;
  }
}

export async function signIn(req: SignInRequest): Promise<Session> {
  return signedIn(await callJson<Session>('POST', '/v1/sessions', req));
}

export async function signOut(): Promise<void> {
  try {
    await callJson<void>('DELETE', '/v1/sessions/current');
  } finally {
    signedOut();
  }
}
