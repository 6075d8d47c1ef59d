import { useState } from 'preact/hooks';
import type { PageProps } from '../app';
import { api, call } from '../api/client';
import { ApiError, fieldErrors, type FieldErrors } from '../api/problem';
import { listTokens } from '../api/queries';
import { useAsync, useTitle } from '../lib/hooks';
import { formatTime } from '../lib/quantity';
import { mayManage } from '../lib/tenancy';
import { Field } from '../components/Field';
import { ErrorBox } from '../components/ErrorBox';
import { CopyButton } from '../components/CopyButton';
import { RevokeCell, THead } from '../components/Table';

/** API tokens: create (the secret is shown once), list, revoke. */
export function Tokens({ session }: PageProps) {
  useTitle('API tokens');
  const admin = session.principal === 'admin';
  const tokens = useAsync(listTokens, []);
  const [form, setForm] = useState({ principal: session.principal, role: 'viewer', ttl: '24h', description: '' });
  const [secret, setSecret] = useState<string | null>(null);
  const [errors, setErrors] = useState<FieldErrors>({ byField: {}, unplaced: [] });
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const set = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  const writer = mayManage(session.role);

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setFailure(null);
    setSecret(null);
    setErrors({ byField: {}, unplaced: [] });
    try {
      const t = await call(api.POST('/v1/tokens', { body: { ...form, ttl: form.ttl.trim() } }));
      setSecret(t.token ?? '');
      tokens.reload();
    } catch (err) {
      if (err instanceof ApiError) setErrors(fieldErrors(err.violations, ['principal', 'role', 'ttl', 'description']));
      setFailure(err);
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (id: string) => {
    setFailure(null);
    try {
      await call(api.DELETE('/v1/tokens/{id}', { params: { path: { id } } }));
      tokens.reload();
    } catch (err) {
      setFailure(err);
    }
  };

  return (
    <section aria-labelledby="tok-h">
      <h1 id="tok-h">API tokens</h1>
      {writer ? (
        <form onSubmit={create} class="card" aria-labelledby="tok-new-h">
          <h2 id="tok-new-h">New token</h2>
          {admin ? <Field name="principal" label="Principal" hint='"admin" or "tenant:<name>"' value={form.principal} onInput={set('principal')} errors={errors.byField.principal} required /> : null}
          <Field name="role" label="Role" value={form.role} onInput={set('role')} errors={errors.byField.role} options={[{ value: 'viewer', label: 'viewer (read only)' }, { value: 'owner', label: 'owner' }]} />
          <Field name="ttl" label="Lifetime" value={form.ttl} onInput={set('ttl')} errors={errors.byField.ttl} hint='e.g. 90m, 24h; empty: the longest allowed' />
          <Field name="description" label="Description" value={form.description} onInput={set('description')} errors={errors.byField.description} />
          {failure && !Object.keys(errors.byField).length ? <ErrorBox error={failure} context="Not created" /> : null}
          <button type="submit" class="btn btn--primary" disabled={busy}>Create token</button>
        </form>
      ) : null}
      {secret !== null ? (
        <div class="card secret" role="status">
          <p>
            <strong>Copy the token now: it is shown only once.</strong>
          </p>
          <p><code data-secret>{secret}</code></p>
          <CopyButton text={secret} label="Copy token" />
        </div>
      ) : null}
      {tokens.error ? <ErrorBox error={tokens.error} /> : null}
      {tokens.data ? (
        <table class="list">
          <THead cols={['Id', 'Principal', 'Role', 'Description', 'Expires', 'Status']} />
          <tbody>
            {tokens.data.map((t) => (
              <tr key={t.id} data-token={t.id}>
                <th scope="row"><code>{t.id}</code></th>
                <td>{t.principal}</td>
                <td>{t.role}</td>
                <td>{t.description}</td>
                <td>{t.expire_time ? formatTime(t.expire_time) : 'never'}</td>
                <RevokeCell revoked={t.revoke_time} label={`Revoke token ${t.id}`} onRevoke={() => revoke(t.id!)} />
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
