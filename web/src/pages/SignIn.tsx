import { useEffect, useState } from 'preact/hooks';
import { api, call } from '../api/client';
import { signIn } from '../lib/session';
import { navigate, useLocation } from '../lib/router';
import { codeFromFragment, safeNext } from '../lib/routes';
import { providerHref, signInErrorMessage, withoutSignInError } from '../lib/signin';
import { useAsync, useTitle } from '../lib/hooks';
import { ErrorBox } from '../components/ErrorBox';
import { Field } from '../components/Field';

/**
 * Sign in with an identity provider (septad runs the sign-in and comes back
 * here with ?sign_in_error= when it did not complete), a pasted API token,
 * or a one-time link's code (#code=...).
 */
export function SignIn() {
  useTitle('Sign in');
  const { query } = useLocation();
  const next = safeNext(query.get('next'));
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [providerError, setProviderError] = useState(() => signInErrorMessage(query.get('sign_in_error')));
  const [busy, setBusy] = useState(false);
  // A septad that signs no people in answers an empty list (an older one
  // 404): the page is then the token form alone.
  const providers = useAsync(async () => (await call(api.GET('/v1/sessions/providers'))).providers, []);
  const links = (providers.data ?? []).flatMap((p) => {
    const href = providerHref(p.sign_in_url, next);
    return href ? [{ href, name: p.name }] : [];
  });

  // The message is shown once: a reload or a shared address must not repeat it.
  useEffect(() => {
    if (query.has('sign_in_error')) navigate(`/sign-in${withoutSignInError(window.location.search)}`, { replace: true });
  }, []);

  const finish = async (req: { token: string } | { sign_in_code: string }) => {
    setBusy(true);
    setError(null);
    setProviderError(null);
    try {
      await signIn(req);
      navigate(next, { replace: true });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  useEffect(() => {
    const redeem = () => {
      const code = codeFromFragment(window.location.hash);
      if (!code) return;
      // The code is single-use: drop it from the address bar and history first.
      history.replaceState(null, '', window.location.pathname + window.location.search);
      void finish({ sign_in_code: code });
    };
    redeem();
    // A link opened while this page is already shown changes only the fragment.
    window.addEventListener('hashchange', redeem);
    return () => window.removeEventListener('hashchange', redeem);
  }, []);

  const submit = (e: Event) => {
    e.preventDefault();
    void finish({ token: token.trim() });
  };

  return (
    <section class="sign-in" aria-labelledby="sign-in-h">
      <h1 id="sign-in-h">Sign in to Septa</h1>
      {providerError ? <ErrorBox error={new Error(providerError)} context="Sign-in failed" /> : null}
      {links.length ? (
        <>
          <h2>With your organisation’s account</h2>
          <ul class="providers">
            {links.map((l) => (
              <li key={l.href}>
                <a class="btn btn--primary" href={l.href}>Sign in with {l.name}</a>
              </li>
            ))}
          </ul>
          <h2>With an API token</h2>
        </>
      ) : null}
      <p>Paste an API token (septactl or your administrator gives you one), or open a one-time sign-in link.</p>
      <form onSubmit={submit}>
        <Field
          name="token"
          label="API token"
          type="password"
          value={token}
          onInput={setToken}
          required
          autoComplete="off"
          hint="The page never stores it: septad exchanges it for a session cookie."
        />
        <ErrorBox error={error} context="Sign-in failed" />
        <button type="submit" class="btn btn--primary" disabled={busy}>
          Sign in
        </button>
      </form>
    </section>
  );
}
