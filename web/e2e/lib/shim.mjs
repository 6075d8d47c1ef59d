// A stand-in for septad's portal routes (web dir, /v1/sessions, cookie,
// Origin and CSRF checks), written to the contract in web/README.md, in
// front of a septad that has only bearer tokens. Used ONLY when
// SEPTA_E2E_SHIM=1 and the septad binary lacks --web-dir, so that the
// browser flows can be exercised before the server side lands; the tests
// that check the server's own security behaviour skip themselves in this mode.
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { readFileSync, existsSync, statSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { once } from 'node:events';

export const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const TYPES = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html; charset=utf-8', '.png': 'image/png', '.svg': 'image/svg+xml' };
const COOKIE = 'septa_session';

function problem(res, status, code, message) {
  res.writeHead(status, { 'Content-Type': 'application/problem+json' });
  res.end(JSON.stringify({ type: 'about:blank', title: code, status, code, message, request_id: 'shim' }));
}

async function body(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks);
}

export async function startShim({ septadBase, webDir, adminToken }) {
  /** cookie value → { token, principal, tenant, role, csrf, expire } */
  const sessions = new Map();
  /** one-time code → API token text */
  const codes = new Map();
  let origin = '';

  async function principalOf(token) {
    const id = /^septa_([0-9a-f]+)_/.exec(token)?.[1];
    const r = await fetch(`${septadBase}/v1/tokens`, { headers: { Authorization: `Bearer ${token}` } });
    if (r.status !== 200 || !id) return null;
    const t = (await r.json()).tokens.find((x) => x.id === id);
    return t ? { principal: t.principal, role: t.role, expire: t.expire_time ?? new Date(Date.now() + 8 * 3600e3).toISOString() } : null;
  }

  function sessionJson(s, cookie) {
    return { principal: s.principal, tenant: s.principal.startsWith('tenant:') ? s.principal.slice(7) : '', role: s.role, expire_time: s.expire, csrf_token: s.csrf, _cookie: cookie };
  }

  function cookieOf(req) {
    const m = new RegExp(`(?:^|;\\s*)${COOKIE}=([^;]+)`).exec(req.headers.cookie ?? '');
    return m ? m[1] : '';
  }

  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, origin);
      const unsafe = !['GET', 'HEAD', 'OPTIONS'].includes(req.method);
      if (url.pathname === '/v1/sessions' && req.method === 'POST') {
        if (req.headers.origin && req.headers.origin !== origin) return problem(res, 403, 'PERMISSION_DENIED', 'cross-site request refused');
        const b = JSON.parse((await body(req)).toString() || '{}');
        const token = b.token ?? codes.get(b.sign_in_code);
        if (b.sign_in_code) codes.delete(b.sign_in_code);
        const who = token ? await principalOf(token) : null;
        if (!who) return problem(res, 401, 'UNAUTHENTICATED', 'the token or sign-in code is not valid');
        const cookie = randomBytes(24).toString('base64url');
        const s = { token, ...who, csrf: randomBytes(16).toString('base64url') };
        sessions.set(cookie, s);
        const { _cookie, ...json } = sessionJson(s, cookie);
        res.writeHead(201, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'Set-Cookie': `${COOKIE}=${cookie}; Path=/; Max-Age=28800; HttpOnly; SameSite=Strict` });
        return res.end(JSON.stringify(json));
      }
      if (url.pathname.startsWith('/v1/')) {
        const cookie = cookieOf(req);
        const s = sessions.get(cookie);
        if (!s) return problem(res, 401, 'UNAUTHENTICATED', 'no session');
        if (unsafe) {
          if (!req.headers.origin || req.headers.origin !== origin) return problem(res, 403, 'PERMISSION_DENIED', 'cross-site request refused: Origin');
          if (req.headers['x-septa-csrf'] !== s.csrf) return problem(res, 403, 'PERMISSION_DENIED', 'cross-site request refused: CSRF');
        }
        if (url.pathname === '/v1/sessions/current') {
          if (req.method === 'DELETE') {
            sessions.delete(cookie);
            res.writeHead(204, { 'Set-Cookie': `${COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict` });
            return res.end();
          }
          const { _cookie, ...json } = sessionJson(s, cookie);
          res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
          return res.end(JSON.stringify(json));
        }
        const headers = { Authorization: `Bearer ${s.token}` };
        for (const h of ['content-type', 'if-match', 'idempotency-key']) if (req.headers[h]) headers[h] = req.headers[h];
        const up = await fetch(septadBase + url.pathname + url.search, { method: req.method, headers, body: unsafe ? await body(req) : undefined });
        const out = {};
        for (const h of ['content-type', 'etag', 'location', 'cache-control']) if (up.headers.get(h)) out[h] = up.headers.get(h);
        res.writeHead(up.status, out);
        return res.end(Buffer.from(await up.arrayBuffer()));
      }
      if (['/healthz', '/readyz', '/metrics'].includes(url.pathname)) {
        const up = await fetch(septadBase + url.pathname);
        res.writeHead(up.status);
        return res.end(await up.text());
      }
      const rel = normalize(decodeURIComponent(url.pathname)).replace(/^(\.\.[/\\])+/, '');
      let file = join(webDir, rel);
      const isFile = existsSync(file) && statSync(file).isFile();
      if (!isFile) {
        if (url.pathname.startsWith('/assets/') || extname(url.pathname)) return problem(res, 404, 'NOT_FOUND', 'no such file');
        file = join(webDir, 'index.html');
      }
      res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff' });
      res.end(readFileSync(file));
    } catch (err) {
      problem(res, 502, 'UNAVAILABLE', String(err));
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${server.address().port}`;
  const adminCode = randomBytes(12).toString('base64url');
  codes.set(adminCode, adminToken);
  return {
    base: origin,
    signInLink: `${origin}/sign-in#code=${adminCode}`,
    stop: () => new Promise((r) => server.close(r)),
  };
}
