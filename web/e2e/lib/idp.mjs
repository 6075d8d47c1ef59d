// The identity tests' OpenID provider (tests/e2e/oidc/idp/idp.mjs: panva's
// oidc-provider, OpenID Certified) for a test file: its locked packages
// installed (ensure.sh), started on a free port with a config, its issuer
// read from its one stdout line, its /_test/ control endpoints.
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, signIn } from '../../../tests/e2e/oidc/idp/browser.mjs';

const IDP_DIR = new URL('../../../tests/e2e/oidc/idp/', import.meta.url).pathname;

/** Starts the provider with `config` (its README.md "Config file"); rejects with its log if it does not start. */
export async function startIdp(config) {
  execFileSync('bash', [join(IDP_DIR, 'ensure.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  const dir = mkdtempSync(join(tmpdir(), 'septa-web-idp-'));
  const configPath = join(dir, 'idp.json');
  writeFileSync(configPath, JSON.stringify(config));
  const logPath = join(dir, 'idp.log');
  const log = createWriteStream(logPath);
  const child = spawn(process.execPath, [join(IDP_DIR, 'idp.mjs'), '--config', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stderr.on('data', (chunk) => {
    log.write(chunk);
    text += chunk;
  });
  const lines = createInterface({ input: child.stdout });
  const ready = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the identity provider did not start in 30 s; log ${logPath}:\n${text.slice(-3000)}`)), 30_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve(JSON.parse(line));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the identity provider exited (${code}) before ready; log ${logPath}:\n${text.slice(-3000)}`));
    });
  });
  const issuer = ready.issuer;

  async function control(method, path, body) {
    const res = await fetch(issuer + path, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path} at the identity provider: ${res.status} ${await res.text()}`);
    return res.json();
  }

  return {
    issuer,
    logPath,
    /** Every request from now on is refused ("503"), held ("hang") or its connection reset ("reset"), until up(). */
    down: (mode = '503') => control('POST', '/_test/down', { mode }),
    up: () => control('POST', '/_test/up'),
    /** Requests per path since the start or the last resetRequests(). */
    requests: () => control('GET', '/_test/requests'),
    resetRequests: () => control('POST', '/_test/requests/reset'),
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      log.end();
      if (!process.env.SEPTA_E2E_KEEP) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A sign-in run by fetch in a browser of its own (idp/browser.mjs: its own
 * cookies, redirects followed by hand) from `startUrl` (septad's start of a
 * sign-in) through the provider's login page, stopped before `callback`:
 * the callback URL the provider sends that browser to, code and state not
 * yet redeemed, as an attacker would hold it.
 */
export async function callbackByFetch(startUrl, callback, user) {
  const { redirect } = await signIn(new Browser([callback]), startUrl, { login: user.email, password: user.password });
  return redirect;
}
