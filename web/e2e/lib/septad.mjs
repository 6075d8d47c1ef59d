// Starts a septad of its own for a test file: a fresh data dir, free ports
// (port 0, read back from its "septad ready" log line), the built portal via
// --web-dir when this septad has the option.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { once } from 'node:events';

export const SEPTAD = resolve(process.env.SEPTA_SEPTAD ?? new URL('../../../build/bin/septad', import.meta.url).pathname);
export const WEB_DIST = resolve(new URL('../../dist', import.meta.url).pathname);

/** Which parts of the portal contract this septad binary has (from its --help). */
export function septadFeatures() {
  const help = spawnSync(SEPTAD, ['--help'], { encoding: 'utf8' });
  if (help.error) throw new Error(`cannot run septad at ${SEPTAD} (set SEPTA_SEPTAD): ${help.error.message}`);
  const text = help.stdout + help.stderr;
  return { webDir: text.includes('--web-dir'), signInLink: text.includes('--sign-in-link') };
}

const READY_RE = /septad ready in \d+ ms: REST (http:\/\/[0-9.:]+)/;

/**
 * @param {{ webDir?: string, inventoryYaml?: string, extraArgs?: string[] }} opts
 */
export async function startSeptad(opts = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'septa-web-e2e-'));
  const args = [
    '--data-dir', dataDir,
    '--http-addr', '127.0.0.1:0',
    '--grpc-addr', '127.0.0.1:0',
    '--kubesim-addr', '127.0.0.1:0',
    '--vcluster-addr', '127.0.0.1:0',
    '--log-level', 'info',
  ];
  if (opts.webDir) args.push('--web-dir', opts.webDir);
  if (septadFeatures().signInLink) args.push('--sign-in-link', 'true');
  if (opts.inventoryYaml) {
    const inv = join(dataDir, 'inventory.yaml');
    writeFileSync(inv, opts.inventoryYaml);
    args.push('--kubesim-inventory', inv);
  }
  args.push(...(opts.extraArgs ?? []));
  const logPath = join(dataDir, 'septad.log');
  const log = createWriteStream(logPath);
  const child = spawn(SEPTAD, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const base = await new Promise((resolveBase, reject) => {
    const timer = setTimeout(() => reject(new Error(`septad did not report ready in 60 s; log ${logPath}:\n${text.slice(-3000)}`)), 60_000);
    const onData = (chunk) => {
      log.write(chunk);
      text += chunk;
      const m = READY_RE.exec(text);
      if (m) {
        clearTimeout(timer);
        resolveBase(m[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`septad exited (${code}) before ready; log ${logPath}:\n${text.slice(-3000)}`));
    });
  });
  await waitReady(base);
  const adminToken = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim();
  return {
    base,
    adminToken,
    dataDir,
    logPath,
    /** Everything septad has logged so far. */
    logText: () => text,
    /** The one-time admin sign-in link septad wrote (--sign-in-link), or null. */
    signInLink() {
      try {
        return readFileSync(join(dataDir, 'sign-in-link'), 'utf8').trim() || null;
      } catch {
        return null;
      }
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await once(child, 'exit');
        clearTimeout(timer);
      }
      log.end();
      if (!process.env.SEPTA_E2E_KEEP) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function waitReady(base) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const r = await fetch(`${base}/readyz`);
      if (r.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${base}/readyz not 200 within 30 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
