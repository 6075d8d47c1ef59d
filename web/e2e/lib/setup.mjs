// One portal under test: septad serving web/dist itself, or (SEPTA_E2E_SHIM=1
// with a septad that cannot yet) septad behind the contract shim.
import { septadFeatures, startSeptad, WEB_DIST } from './septad.mjs';
import { startShim } from './shim.mjs';
import { restClient } from './rest.mjs';

export function portalMode() {
  const { webDir } = septadFeatures();
  if (webDir) return { kind: 'septad', skipBrowser: false, skipServer: false };
  if (process.env.SEPTA_E2E_SHIM === '1') {
    return { kind: 'shim', skipBrowser: false, skipServer: 'SKIPPED: runs against the e2e contract shim (SEPTA_E2E_SHIM=1), not septad; it would test the shim' };
  }
  const why = 'SKIPPED: this septad has no --web-dir and no /v1/sessions yet (the portal server side); set SEPTA_E2E_SHIM=1 to run the browser flows against the contract shim';
  return { kind: 'none', skipBrowser: why, skipServer: why };
}

export async function startPortal(mode, opts = {}) {
  const septad = await startSeptad({ ...opts, webDir: mode.kind === 'septad' ? WEB_DIST : undefined });
  const shim = mode.kind === 'shim' ? await startShim({ septadBase: septad.base, webDir: WEB_DIST, adminToken: septad.adminToken }) : null;
  return {
    septad,
    /** where the browser goes */
    base: shim ? shim.base : septad.base,
    admin: restClient(septad.base, septad.adminToken),
    /** the one-time sign-in link septad printed (or the shim made), if any */
    signInLink() {
      return shim ? shim.signInLink : septad.signInLink();
    },
    async stop() {
      if (shim) await shim.stop();
      await septad.stop();
    },
  };
}
