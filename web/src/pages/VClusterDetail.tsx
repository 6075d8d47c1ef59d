import { useState } from 'preact/hooks';
import type { PageProps } from '../app';
import { api, call } from '../api/client';
import { listCredentials, NOT_RUNNING_PAGE_SIZE, notRunningPods } from '../api/queries';
import type { VirtualCluster } from '../api/types';
import { usePoll, useTitle } from '../lib/hooks';
import { navigate } from '../lib/router';
import { paths } from '../lib/routes';
import { describeCapacity } from '../lib/capacity';
import { pollIntervalMs } from '../lib/vclusters';
import { formatTime } from '../lib/quantity';
import { describeSince } from '../lib/pods';
import { mayWrite } from '../lib/tenancy';
import { ErrorBox } from '../components/ErrorBox';
import { ConfirmDelete } from '../components/ConfirmDelete';
import { Kubeconfig } from '../components/Kubeconfig';
import { RevokeCell, THead } from '../components/Table';
import { Loading } from '../components/Loading';

function Reservation({ vc }: { vc: VirtualCluster }) {
  const r = vc.reservation ?? {};
  const rows: [string, string][] = [
    ...(r.shares ?? []).map((s): [string, string] => [`share on ${s.node} GPU ${s.gpu}`, `${(s.milli_gpu ?? 0) / 1000} GPU, ${s.gpu_memory_mib ?? 0} MiB`]),
    ...(r.mig ?? []).map((m): [string, string] => [`MIG ${m.profile} on ${m.node} GPU ${m.gpu}`, `slices ${m.start}–${(m.start ?? 0) + (m.slices ?? 0) - 1}`]),
    ...(r.gpus ?? []).map((g): [string, string] => [`whole GPU`, `${g.node} GPU ${g.gpu}`]),
    ...(r.nodes ?? []).map((n): [string, string] => ['whole node', n]),
  ];
  return (
    <section aria-labelledby="res-h" class="card">
      <h2 id="res-h">Reservation{r.releasing ? ' (being released)' : ''}</h2>
      {rows.length ? (
        <table>
          <tbody>{rows.map(([k, v], i) => <tr key={i}><th scope="row">{k}</th><td>{v}</td></tr>)}</tbody>
        </table>
      ) : (
        <p>Nothing reserved.</p>
      )}
    </section>
  );
}

function Credentials({ tenant, vcluster, writer, version }: { tenant: string; vcluster: string; writer: boolean; version: number }) {
  const creds = usePoll(() => listCredentials(tenant, vcluster), [tenant, vcluster, version]);
  const [failure, setFailure] = useState<unknown>(null);
  const revoke = async (serial: string) => {
    setFailure(null);
    try {
      await call(api.DELETE('/v1/tenants/{tenant}/vclusters/{vcluster}/credentials/{serial}', { params: { path: { tenant, vcluster, serial } } }));
      creds.reload();
    } catch (err) {
      setFailure(err);
    }
  };
  return (
    <section aria-labelledby="cred-h" class="card">
      <h2 id="cred-h">Credentials</h2>
      <ErrorBox error={creds.error ?? failure} />
      {creds.data && creds.data.length === 0 ? <p>None issued.</p> : null}
      {creds.data && creds.data.length ? (
        <table>
          <THead cols={['Serial', 'Role', 'User', 'Expires', 'Status']} />
          <tbody>
            {creds.data.map((c) => (
              <tr key={c.serial} data-serial={c.serial}>
                <th scope="row"><code>{c.serial}</code></th>
                <td>{c.role}</td>
                <td>{c.common_name}</td>
                <td>{formatTime(c.expire_time)}</td>
                <RevokeCell revoked={c.revoke_time} label={`Revoke certificate ${c.serial}`} onRevoke={writer ? () => revoke(c.serial!) : undefined} />
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

function PodsNotRunning({ tenant, vcluster, vc }: { tenant: string; vcluster: string; vc: VirtualCluster }) {
  // On the virtual cluster's schedule; a host control plane's 412 cannot change, so it is not asked again.
  const pods = usePoll(() => notRunningPods(tenant, vcluster), [tenant, vcluster], (page) => (page === null ? 0 : pollIntervalMs([vc])));
  const page = pods.data;
  return (
    <section aria-labelledby="pods-h" class="card">
      <h2 id="pods-h">Pods not running</h2>
      <ErrorBox error={pods.error} context={page === undefined ? undefined : 'Refresh failed'} />
      {page === null ? <p>This virtual cluster's Kubernetes API runs on the host cluster, where Septa does not read its pods: list them with kubectl.</p> : null}
      {page && !page.pods?.length ? <p>None.</p> : null}
      {page?.pods?.length ? (
        <table aria-labelledby="pods-h">
          <THead cols={['Pod', 'Phase', 'Reason', 'Message', 'Since']} />
          <tbody>
            {page.pods.map((p) => (
              <tr key={`${p.namespace}/${p.name}`} data-pod={`${p.namespace}/${p.name}`}>
                <th scope="row">{p.namespace}/{p.name}</th>
                <td>{p.phase}</td>
                <td>{p.reason}</td>
                <td>{p.message}</td>
                <td>{describeSince(p)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {page?.next_page_token ? <p class="hint">First {NOT_RUNNING_PAGE_SIZE} shown.</p> : null}
    </section>
  );
}

export function VClusterDetail({ params, session }: PageProps) {
  const tenant = params.tenant!;
  const name = params.name!;
  useTitle(`${name} of ${tenant}`);
  const vc = usePoll(
    () => call(api.GET('/v1/tenants/{tenant}/vclusters/{name}', { params: { path: { tenant, name } } })),
    [tenant, name],
    (d) => pollIntervalMs(d ? [d] : undefined),
  );
  const [actionError, setActionError] = useState<unknown>(null);
  const [credVersion, setCredVersion] = useState(0);
  const writer = mayWrite(session.role);

  const act = async (what: 'sleep' | 'wake') => {
    setActionError(null);
    try {
      const path = { params: { path: { tenant, name } } };
      await call(what === 'sleep' ? api.POST('/v1/tenants/{tenant}/vclusters/{name}:sleep', path) : api.POST('/v1/tenants/{tenant}/vclusters/{name}:wake', path));
      vc.reload();
    } catch (err) {
      setActionError(err);
    }
  };

  if (!vc.data) {
    return <Loading id="vcd-h" title={name} error={vc.error} />;
  }
  const d = vc.data;
  return (
    <section aria-labelledby="vcd-h" data-loaded="vcluster">
      <h1 id="vcd-h">{name}</h1>
      {d.display_name ? <p class="lead display-name">{d.display_name}</p> : null}
      {vc.error ? <ErrorBox error={vc.error} context="Refresh failed" /> : null}
      <dl class="facts">
        <dt>State</dt>
        <dd><span class={`state state--${(d.state ?? '').toLowerCase()}`} data-testid="vc-state" role="status">{d.state}</span></dd>
        <dt>Capacity</dt>
        <dd>{describeCapacity(d.capacity)}</dd>
        <dt>Endpoint</dt>
        <dd><code>{d.endpoint || '—'}</code></dd>
        <dt>Host namespace</dt>
        <dd><code>{d.host_namespace || '—'}</code></dd>
        <dt>Generation</dt>
        <dd>{d.generation}</dd>
        <dt>Created</dt>
        <dd>{formatTime(d.create_time)}</dd>
      </dl>
      {writer ? (
        <div class="actions">
          <a class="btn" href={paths.resizeVcluster(tenant, name)}>Resize</a>
          {d.state === 'READY' ? <button type="button" class="btn" onClick={() => act('sleep')}>Sleep</button> : null}
          {d.state === 'SLEEPING' ? <button type="button" class="btn" onClick={() => act('wake')}>Wake</button> : null}
        </div>
      ) : null}
      <ErrorBox error={actionError} />

      <div class="grid">
        <section aria-labelledby="cond-h" class="card card--wide">
          <h2 id="cond-h">Conditions</h2>
          <table>
            <THead cols={['Type', 'Status', 'Reason', 'Message', 'Since']} />
            <tbody>
              {(d.conditions ?? []).map((c) => (
                <tr key={c.type}>
                  <th scope="row">{c.type}</th>
                  <td>{c.status}</td>
                  <td>{c.reason}</td>
                  <td>{c.message}</td>
                  <td>{formatTime(c.last_transition_time)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
        <Reservation vc={d} />
      </div>
      <PodsNotRunning tenant={tenant} vcluster={name} vc={d} />
      {d.state === 'READY' ? <Kubeconfig tenant={tenant} vcluster={name} viewer={!writer} onIssued={() => setCredVersion((n) => n + 1)} /> : null}
      <Credentials tenant={tenant} vcluster={name} writer={writer} version={credVersion} />
      {writer && d.state !== 'DELETING' ? (
        <ConfirmDelete
          name={name}
          what="virtual cluster"
          onDelete={async () => {
            await call(api.DELETE('/v1/tenants/{tenant}/vclusters/{name}', { params: { path: { tenant, name } } }));
            navigate(paths.vclusters(tenant));
          }}
        />
      ) : null}
    </section>
  );
}
