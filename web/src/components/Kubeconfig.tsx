import { useState } from 'preact/hooks';
import { api, call } from '../api/client';
import { ApiError, fieldErrors, type FieldErrors } from '../api/problem';
import { formatTime } from '../lib/quantity';
import { Field } from './Field';
import { CopyButton } from './CopyButton';
import { download } from '../lib/download';

interface Issued {
  kubeconfig: string;
  role: string;
  expire: string;
  serial: string;
  capped: boolean;
}

/** Issues a kubeconfig (role, TTL); the key is returned once, so it is offered for download and copy at once. */
export function Kubeconfig({ tenant, vcluster, viewer, onIssued }: { tenant: string; vcluster: string; viewer: boolean; onIssued: () => void }) {
  const [role, setRole] = useState(viewer ? 'view' : 'edit');
  const [ttl, setTtl] = useState('1h');
  const [issued, setIssued] = useState<Issued | null>(null);
  const [errors, setErrors] = useState<FieldErrors>({ byField: {}, unplaced: [] });
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const filename = `${tenant}-${vcluster}.kubeconfig`;

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setFailure(null);
    setErrors({ byField: {}, unplaced: [] });
    try {
      const r = await call(
        api.POST('/v1/tenants/{tenant}/vclusters/{vcluster}:kubeconfig', { params: { path: { tenant, vcluster } }, body: { role, ttl: ttl.trim() } }),
      );
      const got: Issued = { kubeconfig: r.kubeconfig ?? '', role: r.role ?? role, expire: r.expire_time ?? '', serial: r.serial ?? '', capped: !!r.ttl_capped };
      setIssued(got);
      download(filename, got.kubeconfig, 'application/yaml');
      onIssued();
    } catch (err) {
      if (err instanceof ApiError) setErrors(fieldErrors(err.violations, ['role', 'ttl']));
      setFailure(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="kc-h" class="card">
      <h2 id="kc-h">Kubeconfig</h2>
      <form onSubmit={submit} class="inline-form">
        <Field
          name="role"
          label="Role"
          value={role}
          onInput={setRole}
          errors={errors.byField.role}
          options={(viewer ? ['view'] : ['admin', 'edit', 'view']).map((r) => ({ value: r, label: r }))}
        />
        <Field name="ttl" label="Lifetime" value={ttl} onInput={setTtl} errors={errors.byField.ttl} hint="e.g. 15m, 1h, 8h; capped by the tier" />
        <button type="submit" class="btn btn--primary" disabled={busy}>
          Download kubeconfig
        </button>
      </form>
      {failure && !errors.byField.role && !errors.byField.ttl ? (
        <div class="error-box" role="alert"><p>No kubeconfig: {failure instanceof Error ? failure.message : String(failure)}</p></div>
      ) : null}
      {issued ? (
        <div class="issued" role="status">
          <p>
            Issued certificate {issued.serial}, role {issued.role}, expires {formatTime(issued.expire)}
            {issued.capped ? ' (the tier capped the lifetime)' : ''}. Saved as {filename}; Septa keeps no copy of its key.
          </p>
          <button type="button" class="btn" onClick={() => download(filename, issued.kubeconfig, 'application/yaml')}>Download again</button>{' '}
          <CopyButton text={issued.kubeconfig} label="Copy kubeconfig" />
        </div>
      ) : null}
    </section>
  );
}
