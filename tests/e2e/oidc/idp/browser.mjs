// A browser's worth of fetch for the identity tests: cookies kept (by name;
// one host), redirects followed by hand until a page or a redirect to one of
// the client's URIs (never fetched), forms read, PKCE pairs made, and a
// sign-in through idp.mjs's login page. Used by selftest.mjs and by the
// tests' command-line helpers (sign_in.mjs).
import * as crypto from 'node:crypto';

export const form = (fields) => new URLSearchParams(fields);

export class Browser {
  cookies = new Map();

  // stopAt: URL prefixes of the client (its redirect URIs).
  constructor(stopAt = []) {
    this.stopAt = stopAt;
  }

  async request(url, { method = 'GET', body } = {}) {
    const headers = {};
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(url, { method, headers, body: body && form(body), redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const [name, value] = [pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1)];
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]) < Date.now()));
      if (expired) this.cookies.delete(name); else this.cookies.set(name, value);
    }
    return res;
  }

  // Follows redirects until a page, or a redirect to one of stopAt.
  async go(url, opts = {}) {
    let res = await this.request(url, opts);
    for (let hops = 0; res.status >= 300 && res.status < 400; hops += 1) {
      if (hops >= 20) throw new Error(`redirect loop at ${url}`);
      const next = new URL(res.headers.get('location'), url).href;
      if (this.stopAt.some((s) => next.startsWith(s))) return { redirect: new URL(next) };
      url = next;
      res = await this.request(url);
    }
    return { status: res.status, url, html: await res.text() };
  }
}

// The hidden inputs and the action of the form with this id (or the first).
export function parseForm(html, base, id) {
  const start = id ? html.indexOf(`id="${id}"`) : html.indexOf('<form');
  if (start < 0) throw new Error(`no form ${id ?? ''} in ${html}`);
  const tag = html.slice(html.lastIndexOf('<form', start), html.indexOf('</form>', start));
  const action = new URL(tag.match(/action="([^"]*)"/)[1], base).href;
  const fields = {};
  for (const m of tag.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) fields[m[1]] = m[2];
  return { action, fields };
}

export function pkce() {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

// Signs in through idp.mjs's login page; returns the login page it filled
// and the redirect to the client.
export async function signIn(browser, authorizeUrl, { login = 'alice', password = 'wonderland' } = {}) {
  const page = await browser.go(authorizeUrl);
  if (page.status !== 200 || !/\/interaction\/[^/]+$/.test(page.url)) {
    throw new Error(`no login page at ${authorizeUrl}: ${page.status} ${page.html ?? ''}`);
  }
  const done = await browser.go(page.url, { method: 'POST', body: { login, password } });
  if (!done.redirect) throw new Error(`no redirect after login: ${done.status} ${done.html}`);
  return { page, redirect: done.redirect };
}
