// A person at the device page of the test provider (idp/idp.mjs), with
// plain fetch as idp/selftest.mjs does it: enters the user code septactl
// printed, confirms, then signs in (approve) or aborts the sign-in (deny).
// Usage: node approve_device.mjs VERIFICATION_URI USER_CODE LOGIN PASSWORD approve|deny
// Exits 0 when the provider showed what the choice leads to, 1 otherwise.
const [uri, userCode, login, password, choice] = process.argv.slice(2);

// Cookies kept by name (one host); redirects followed by hand.
class Browser {
  cookies = new Map();

  async request(url, { method = 'GET', body } = {}) {
    const headers = {};
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(url, { method, headers, body: body && new URLSearchParams(body), redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(';')[0];
      this.cookies.set(pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1));
    }
    return res;
  }

  async go(url, opts = {}) {
    let res = await this.request(url, opts);
    for (let hops = 0; res.status >= 300 && res.status < 400; hops += 1) {
      if (hops >= 20) throw new Error('redirect loop');
      url = new URL(res.headers.get('location'), url).href;
      res = await this.request(url);
    }
    return { status: res.status, url, html: await res.text() };
  }
}

// The hidden inputs and the action of the form with this id.
function parseForm(html, base, id) {
  const start = html.indexOf(`id="${id}"`);
  if (start < 0) throw new Error(`no form ${id} in ${html}`);
  const tag = html.slice(html.lastIndexOf('<form', start), html.indexOf('</form>', start));
  const action = new URL(tag.match(/action="([^"]*)"/)[1], base).href;
  const fields = {};
  for (const m of tag.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) fields[m[1]] = m[2];
  return { action, fields };
}

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
