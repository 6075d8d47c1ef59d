import { useEffect, useState } from 'preact/hooks';
import { signIn } from '../lib/session';
import { navigate, useLocation } from '../lib/router';
import { codeFromFragment, safeNext } from '../lib/routes';
import { useTitle } from '../lib/hooks';
import { ErrorBox } from '../components/ErrorBox';
import { Field } from '../components/Field';

/** Sign in with a pasted API token, or a one-time link's code (#code=...). */
export function SignIn() {
  useTitle('Sign in');
  const { query } = useLocation();
  const next = safeNext(query.get('next'));
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const finish = async (req: { token: string } | { sign_in_code: string }) => {
    setBusy(true);
    setError(null);
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
