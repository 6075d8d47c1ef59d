import type { PageProps } from '../app';
import { countVClusters, getFreeCapacity, getTenant, getTier, listExpiringCredentials, listTokens, listVClusters } from '../api/queries';
import { api, call } from '../api/client';
import { usePoll, useTitle } from '../lib/hooks';
import { capacityKindOf, COUNTED_STATES, countsByState, holdings, quotaRows, remaining, STATES, type CapacityKind, type Holdings } from '../lib/quota';
import { DAY_MS, expiresWithin, formatGpuMilli, formatMiB, formatSeconds, formatTime, parseProtoDuration, toInt } from '../lib/quantity';
import { paths } from '../lib/routes';
import { ErrorBox } from '../components/ErrorBox';
import { useEffect } from 'preact/hooks';
import { markOnce } from '../lib/perf';
import { QuotaMeter } from '../components/QuotaMeter';
import { FreeTable } from '../components/FreeTable';
import { THead } from '../components/Table';
import { Loading } from '../components/Loading';

function HeldRows({ kind, h }: { kind: CapacityKind; h: Holdings }) {
  switch (kind) {
    case 'shared':
      return (
        <>
          <tr><th scope="row">GPU shares</th><td>{h.shares} share{h.shares === 1 ? '' : 's'}, {formatGpuMilli(h.sharedMilli)} GPU</td></tr>
          <tr><th scope="row">GPU memory in shares</th><td>{formatMiB(h.sharedMemoryMib)}</td></tr>
        </>
      );
    case 'mig': {
      const profiles = Object.entries(h.migByProfile).sort();
      return profiles.length ? (
        <>{profiles.map(([p, n]) => <tr key={p}><th scope="row">MIG {p}</th><td>{n} instance{n === 1 ? '' : 's'}</td></tr>)}</>
      ) : (
        <tr><th scope="row">MIG instances</th><td>0</td></tr>
      );
    }
    case 'gpus':
      return <tr><th scope="row">Whole GPUs</th><td>{h.wholeGpus}</td></tr>;
    case 'nodes':
      return <tr><th scope="row">Whole nodes</th><td>{h.nodes}</td></tr>;
  }
}

export function Overview({ params, session }: PageProps) {
  const tenant = params.tenant!;
  useTitle(`Overview of ${tenant}`);
  const admin = session.principal === 'admin';
  // Every read in parallel (the tier as soon as the tenant names it); none
  // lists all the virtual clusters: the counts per state come from the quota's
  // total and filtered lists (lib/quota.ts countsByState).
  const main = usePoll(
    async () => {
      const [{ t, tier }, quota, counted, tokens, free] = await Promise.all([
        getTenant(tenant).then(async (t) => ({ t, tier: t.trust_tier ? await getTier(t.trust_tier) : undefined })),
        call(api.GET('/v1/tenants/{tenant}/quota', { params: { path: { tenant } } })),
        Promise.all(COUNTED_STATES.map(async (s) => [s, await countVClusters(tenant, s)] as const)),
        listTokens(),
        getFreeCapacity(tenant),
      ]);
      const total = toInt(quota.usage?.vclusters);
      return { t, quota, total, byState: countsByState(total, Object.fromEntries(counted)), tokens, free, tier };
    },
    [tenant],
    () => 15000,
  );
  // What the virtual clusters hold needs each one's reservation: the one read of
  // every page. It and the certificates start once the rest is shown, so that
  // they do not compete with it for septad (the quota read is the slowest).
  const shown = main.data !== undefined;
  const held = usePoll(async () => (shown ? listVClusters(tenant) : null), [tenant, shown], (d) => (d ? 15000 : 0));
  const creds = usePoll(async () => (shown ? listExpiringCredentials(tenant, DAY_MS / 1000) : null), [tenant, shown], (d) => (d ? 15000 : 0));

  useEffect(() => {
    if (main.data) markOnce('septa:overview-rendered');
  }, [main.data]);
  useEffect(() => {
    if (main.data && held.data) markOnce('septa:overview-held-rendered');
  }, [main.data, held.data]);

  if (!main.data) {
    return <Loading id="ov-h" title={`Overview of ${tenant}`} error={main.error} />;
  }
  const { t, quota, total, byState, tokens, free, tier } = main.data;
  const kind = capacityKindOf(tier?.gpu_sharing);
  const rows = quotaRows(quota);
  const now = Date.now();
  const expiringTokens = tokens.filter((k) => k.principal === `tenant:${tenant}` && !k.revoke_time && expiresWithin(k.expire_time, now, DAY_MS));
  const expiringCerts = creds.data ?? [];
  const ttl = parseProtoDuration(tier?.credential_ttl_max);

  return (
    <section aria-labelledby="ov-h" data-loaded="overview">
      <h1 id="ov-h">Overview of {tenant}</h1>
      <p class="lead">
        <span class="display-name">{t.display_name || tenant}</span> · tier <strong>{tier?.display_name ?? t.trust_tier}</strong>
        {tier ? ` (${tier.gpu_sharing}; credentials at most ${formatSeconds(ttl)})` : ''} · state {t.state}
      </p>
      {main.error ? <ErrorBox error={main.error} context="Refresh failed" /> : null}
      {t.state === 'SUSPENDED' ? (
        <p class="error-box" role="status">
          This tenant is suspended: it can read but not change anything, and its virtual clusters sleep.
        </p>
      ) : null}

      <div class="grid">
        <section aria-labelledby="quota-h" class="card card--wide">
          <h2 id="quota-h">Quota</h2>
          <table>
            <THead cols={['Kind', 'Used', 'Limit', 'Free', 'Use']} />
            <tbody>
              {rows.map((r) => {
                const left = remaining(r);
                return (
                  <tr key={r.key} data-quota={r.key}>
                    <th scope="row">{r.label}</th>
                    <td>{r.format(r.used)}</td>
                    <td>{r.limit === null ? 'unlimited' : r.format(r.limit)}</td>
                    <td>{left === null ? 'unlimited' : r.format(left)}</td>
                    <td><QuotaMeter label={r.label} used={r.used} limit={r.limit} /></td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </section>

        {kind ? (
          <section aria-labelledby="held-h" class="card">
            <h2 id="held-h">Held now ({tier?.display_name})</h2>
            <table>
              <tbody>
                {held.data ? <HeldRows kind={kind} h={holdings(held.data)} /> : <tr><td aria-busy="true">{held.error ? 'Could not read the virtual clusters.' : 'Reading the virtual clusters…'}</td></tr>}
              </tbody>
            </table>
            <h3 id="free-h">Free for {admin ? 'this' : 'your'} tier now</h3>
            <FreeTable kind={kind} free={free} labelledBy="free-h" />
            <p class="hint">What a new virtual cluster could get now (a summary of the current layouts, not a promise); the create form checks a request exactly.</p>
          </section>
        ) : null}

        <section aria-labelledby="states-h" class="card">
          <h2 id="states-h">Virtual clusters by state</h2>
          <table>
            <tbody>
              {STATES.map((s) => (
                <tr key={s} data-state={s}>
                  <th scope="row"><a href={`${paths.vclusters(tenant)}?state=${s}`}>{s}</a></th>
                  <td>{byState[s] ?? 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p><a href={paths.vclusters(tenant)}>All {total} virtual clusters</a></p>
        </section>

        <section aria-labelledby="exp-h" class="card">
          <h2 id="exp-h">Credentials expiring within a day</h2>
          <ul>
            {expiringTokens.map((k) => (
              <li key={k.id}>API token {k.id} ({k.role}{k.description ? `, ${k.description}` : ''}) expires {formatTime(k.expire_time)}</li>
            ))}
            {expiringCerts.map((c) => (
              <li key={c.serial}>
                Kubeconfig certificate {c.serial} of <a href={paths.vcluster(tenant, c.vcluster!)}>{c.vcluster}</a> ({c.role}) expires {formatTime(c.expire_time)}
              </li>
            ))}
          </ul>
          {expiringTokens.length + expiringCerts.length === 0 ? <p>{creds.data ? 'None.' : 'Checking certificates…'}</p> : null}
        </section>
      </div>
    </section>
  );
}
