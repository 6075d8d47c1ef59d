// Signs a user in to a client of the test provider by authorization code +
// PKCE through its login page, as a browser would, and prints the token
// endpoint's answer (id_token, refresh_token, ...) as one JSON line. For
// shell tests that need a person's ID token.
//   node sign_in.mjs --issuer URL --client-id ID [--client-secret S]
//        --redirect-uri URI --login USER --password PW [--scope "openid ..."]
import { parseArgs } from 'node:util';
import { Browser, form, pkce, signIn } from './browser.mjs';

const { values: a } = parseArgs({
  options: {
    issuer: { type: 'string' },
    'client-id': { type: 'string' },
    'client-secret': { type: 'string' },
    'redirect-uri': { type: 'string' },
    login: { type: 'string' },
    password: { type: 'string' },
    scope: { type: 'string', default: 'openid email groups offline_access' },
  },
});
for (const k of ['issuer', 'client-id', 'redirect-uri', 'login', 'password']) {
  if (!a[k]) {
    console.error(`sign_in.mjs: --${k} is required`);
    process.exit(2);
  }
}
const disco = await (await fetch(`${a.issuer}/.well-known/openid-configuration`)).json();
const { verifier, challenge } = pkce();
const authorize = new URL(disco.authorization_endpoint);
for (const [k, v] of Object.entries({
  client_id: a['client-id'], response_type: 'code', redirect_uri: a['redirect-uri'], scope: a.scope,
  state: 'st', nonce: 'n', code_challenge: challenge, code_challenge_method: 'S256', prompt: 'consent',
})) authorize.searchParams.set(k, v);
const { redirect } = await signIn(new Browser([a['redirect-uri']]), authorize.href, { login: a.login, password: a.password });
const code = redirect.searchParams.get('code');
if (!code) {
  console.error(`sign_in.mjs: no code in ${redirect.href}`);
  process.exit(1);
}
const headers = { 'content-type': 'application/x-www-form-urlencoded' };
const fields = { grant_type: 'authorization_code', code, redirect_uri: a['redirect-uri'], code_verifier: verifier };
if (a['client-secret']) {
  headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(a['client-id'])}:${encodeURIComponent(a['client-secret'])}`).toString('base64')}`;
} else {
  fields.client_id = a['client-id'];
}
const res = await fetch(disco.token_endpoint, { method: 'POST', headers, body: form(fields) });
const body = await res.json();
if (res.status !== 200) {
  console.error(`sign_in.mjs: the token endpoint answered ${res.status}: ${JSON.stringify(body)}`);
  process.exit(1);
}
console.log(JSON.stringify(body));
