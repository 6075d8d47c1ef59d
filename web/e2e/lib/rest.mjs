// REST calls the tests make as admin or as a tenant (bearer tokens), to set
// up fixtures and to check what the browser did.
export function restClient(base, token) {
  async function req(method, path, body, headers = {}) {
    const res = await fetch(base + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text, headers: res.headers };
  }
  async function ok(method, path, body) {
    const r = await req(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  }
  return { req, ok };
}

/** Creates a tenant and an owner token for it; returns the token text. */
export async function tenantWithToken(admin, name, tier, extra = {}) {
  await admin.ok('POST', '/v1/tenants', { name, trust_tier: tier, ...extra });
  const t = await admin.ok('POST', '/v1/tokens', { principal: `tenant:${name}`, role: 'owner', description: 'e2e' });
  return t.token;
}

/** Polls `probe` until it returns a truthy value (a server-side state the test waits for). */
export async function eventually(probe, { timeoutMs = 60_000, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await probe();
    if (last) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
