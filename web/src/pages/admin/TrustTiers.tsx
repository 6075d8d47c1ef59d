import type { PageProps } from '../../app';
import { api, call } from '../../api/client';
import { useAsync, useTitle } from '../../lib/hooks';
import { formatSeconds, parseProtoDuration } from '../../lib/quantity';
import { ErrorBox } from '../../components/ErrorBox';
import { THead } from '../../components/Table';

export function TrustTiers(_: PageProps) {
  useTitle('Trust tiers');
  const tiers = useAsync(async () => (await call(api.GET('/v1/trust-tiers'))).trust_tiers ?? [], []);
  return (
    <section aria-labelledby="tt-h">
      <h1 id="tt-h">Trust tiers</h1>
      <ErrorBox error={tiers.error} />
      {tiers.data ? (
        <table class="list" data-loaded="tiers">
          <THead cols={['Name', 'GPU sharing', 'Co-tenancy', 'Runtime class', 'Credential lifetime at most', 'API limits']} />
          <tbody>
            {tiers.data.map((t) => (
              <tr key={t.name}>
                <th scope="row">{t.display_name || t.name}<span class="hint"> ({t.name})</span><br /><span class="hint">{t.description}</span></th>
                <td>{t.gpu_sharing}</td>
                <td>{t.co_tenancy}</td>
                <td><code>{t.runtime_class}</code></td>
                <td>{formatSeconds(parseProtoDuration(t.credential_ttl_max))}</td>
                <td>{t.api_limits ? `${t.api_limits.objects ?? '∞'} objects, ${t.api_limits.watches ?? '∞'} watches, ${t.api_limits.requests_in_flight ?? '∞'} in flight` : 'unlimited'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
