// Signs a user in to septad's portal through the test provider, as a
// browser does: GET septad's /v1/sessions/oidc/start, the provider's login
// page, then septad's callback; prints one JSON line for shell tests:
//   {"callback": the callback URL the provider redirected to,
//    "status": the callback's status, "location": where it sent the browser,
//    "session": the septa_session cookie set (or ""), "binding": the
//    septa_sign_in cookie the start set}
//   node portal_sign_in.mjs --septad http://127.0.0.1:PORT --issuer ISSUER
//        --login USER --password PW [--return-to /path] [--binding VALUE]
//        [--provider-down] [--no-callback]
// --binding replaces the browser's sign-in cookie before the callback
// (another browser's callback); --provider-down takes the provider down
// (its /_test/down) between its login page and septad's callback;
// --no-callback stops before the callback (its URL and the binding printed).
import { parseArgs } from 'node:util';
import { Browser, signIn } from './browser.mjs';

const { values: a } = parseArgs({
  options: {
    septad: { type: 'string' },
    issuer: { type: 'string' },
    login: { type: 'string' },
    password: { type: 'string' },
    'return-to': { type: 'string', default: '/t/acme' },
    binding: { type: 'string' },
    'provider-down': { type: 'boolean', default: false },
    'no-callback': { type: 'boolean', default: false },
  },
});
for (const k of ['septad', 'issuer', 'login', 'password']) {
  if (!a[k]) {
    console.error(`portal_sign_in.mjs: --${k} is required`);
    process.exit(2);
  }
}
const callbackPrefix = `${a.septad}/v1/sessions/oidc/callback`;
const browser = new Browser([callbackPrefix]);
const start = new URL(`${a.septad}/v1/sessions/oidc/start`);
start.searchParams.set('issuer', a.issuer);
start.searchParams.set('return_to', a['return-to']);
const { redirect } = await signIn(browser, start.href, { login: a.login, password: a.password });
const binding = browser.cookies.get('septa_sign_in') ?? '';
if (a['no-callback']) {
  console.log(JSON.stringify({ callback: redirect.href, binding }));
  process.exit(0);
}
if (a.binding !== undefined) browser.cookies.set('septa_sign_in', a.binding);
if (a['provider-down']) await fetch(`${a.issuer}/_test/down`, { method: 'POST', body: '{"mode":"503"}' });
const res = await browser.request(redirect.href);
console.log(JSON.stringify({
  callback: redirect.href,
  status: res.status,
  location: res.headers.get('location') ?? '',
  session: browser.cookies.get('septa_session') ?? '',
  binding,
}));
