// Signing in with an identity provider (septad runs the authorization code
// flow itself; the page only navigates to it and reads how it ended).

/** The codes septad's callback sends back as /sign-in?sign_in_error=<code>, and what the person can do. */
export const SIGN_IN_ERRORS: Record<string, string> = {
  expired: 'The sign-in took too long, or its link was already used. Start again.',
  denied: 'The identity provider refused the sign-in, or it was cancelled. Start again, or ask your administrator for access.',
  provider_unavailable: 'The identity provider cannot be reached. Try again later, or sign in with an API token.',
  refused: 'Septa refused the identity provider’s answer (septad’s log says why). Ask your administrator, or sign in with an API token.',
  browser_mismatch: 'The sign-in was begun in another browser, or its cookie is gone. Start again in this browser.',
};

/** What to tell the person for a sign_in_error code; null when there is none. */
export function signInErrorMessage(code: string | null): string | null {
  if (code === null) return null;
  // Own keys only ("constructor" is no code). A code this portal does not
  // know yet (a newer septad) still says the sign-in failed.
  if (Object.hasOwn(SIGN_IN_ERRORS, code)) return SIGN_IN_ERRORS[code]!;
  return 'The sign-in with the identity provider did not complete. Start again, or sign in with an API token.';
}

/** The sign-in page's query without sign_in_error (the message is shown once; a reload must not repeat it). */
export function withoutSignInError(search: string): string {
  const q = new URLSearchParams(search);
  q.delete('sign_in_error');
  const rest = q.toString();
  return rest ? `?${rest}` : '';
}

/**
 * The link that starts a provider's sign-in: septad's sign_in_url with the
 * page to come back to (a path that safeNext accepted). Only a path of this
 * origin: anything else from the server is not followed (null).
 */
export function providerHref(signInUrl: string, next: string): string | null {
  if (!signInUrl.startsWith('/') || signInUrl.startsWith('//') || signInUrl.startsWith('/\\')) return null;
  const url = new URL(signInUrl, 'http://portal.invalid');
  url.searchParams.set('return_to', next);
  return url.pathname + url.search;
}

/** Where the browser goes after signing out: the provider's end-session URL when it is http(s), else nowhere (null). */
export function endSessionTarget(url: string | undefined): string | null {
  if (!url) return null;
  const parsed = URL.parse(url);
  return parsed && (parsed.protocol === 'https:' || parsed.protocol === 'http:') ? parsed.href : null;
}
