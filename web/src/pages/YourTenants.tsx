import type { Caller } from '../api/session-types';
import { useTitle } from '../lib/hooks';
import { paths } from '../lib/routes';
import { memberTenants } from '../lib/tenancy';

/**
 * A person with no tenant chosen: the tenants it is a member of, to choose
 * one; or, with none, who it is signed in as and what an owner must add.
 */
export function YourTenants({ caller }: { caller: Caller }) {
  const tenants = memberTenants(caller);
  const none = tenants.length === 0;
  useTitle(none ? 'No tenant' : 'Choose a tenant');
  if (none) {
    const groups = caller.groups ?? [];
    return (
      <section aria-labelledby="yt-h" data-loaded="no-tenant">
        <h1 id="yt-h">You are a member of no tenant</h1>
        <p>
          Ask a tenant’s owner to add you, <code>user:{caller.user}</code>, or one of your groups as a member of the tenant. Once added, sign in
          again or reload this page.
        </p>
        {groups.length ? (
          <>
            <p>Your groups, as your identity provider names them:</p>
            <ul>{groups.map((g) => <li key={g}><code>group:{g}</code></li>)}</ul>
          </>
        ) : (
          <p>Your identity provider names no groups of yours.</p>
        )}
      </section>
    );
  }
  return (
    <section aria-labelledby="yt-h" data-loaded="choose-tenant">
      <h1 id="yt-h">Choose a tenant</h1>
      <p>You are a member of these tenants; the tenant picker above switches between them.</p>
      <ul>
        {tenants.map((t) => (
          <li key={t.tenant}>
            <a href={paths.overview(t.tenant)}>{t.tenant}</a> ({t.role})
          </li>
        ))}
      </ul>
    </section>
  );
}
