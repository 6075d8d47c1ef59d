// A person at the device page of the test provider (idp/idp.mjs), with
// plain fetch (idp/browser.mjs): enters the user code septactl
// printed, confirms, then signs in (approve) or aborts the sign-in (deny).
// Usage: node approve_device.mjs VERIFICATION_URI USER_CODE LOGIN PASSWORD approve|deny
// Exits 0 when the provider showed what the choice leads to, 1 otherwise.
import { Browser, parseForm } from './idp/browser.mjs';

const [uri, userCode, login, password, choice] = process.argv.slice(2);

const browser = new Browser();
const input = await browser.go(uri);
const inputForm = parseForm(input.html, input.url, 'op.deviceInputForm');
const confirm = await browser.go(inputForm.action, { method: 'POST', body: { ...inputForm.fields, user_code: userCode } });
const confirmForm = parseForm(confirm.html, confirm.url, 'op.deviceConfirmForm');
const loginPage = await browser.go(confirmForm.action, { method: 'POST', body: confirmForm.fields });
if (!/\/interaction\//.test(loginPage.url)) throw new Error(`no login page after the confirmation: ${loginPage.url} ${loginPage.html}`);
if (choice === 'deny') {
  const aborted = await browser.go(`${loginPage.url}/abort`);
  console.log(`denied: ${aborted.status}`);
  process.exit(aborted.status < 500 ? 0 : 1);
}
const done = await browser.go(loginPage.url, { method: 'POST', body: { login, password } });
if (!/id="device-success"/.test(done.html)) {
  console.error(`the provider did not show success: ${done.status} ${done.html}`);
  process.exit(1);
}
console.log('approved');
