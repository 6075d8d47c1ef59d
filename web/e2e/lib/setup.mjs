// One portal under test: a septad of its own serving web/dist. A septad
// built before the portal's server side (no --web-dir) cannot serve it: every
// browser test then skips, saying why.
import { septadFeatures, startSeptad, WEB_DIST } from './septad.mjs';
import { restClient } from './rest.mjs';

export function portalMode() {
  const { webDir } = septadFeatures();
  if (webDir) return { skipBrowser: false };
  const why = 'SKIPPED: this septad has no --web-dir (built before the portal\'s server side); build septad from a tree with it';
  return { skipBrowser: why };
}

export async function startPortal(opts = {}) {
  const septad = await startSeptad({ ...opts, webDir: WEB_DIST });
  return {
    septad,
    /** where the browser goes: septad's REST listener */
    base: septad.base,
    admin: restClient(septad.base, septad.adminToken),
    /** the one-time admin sign-in link septad wrote, if any */
    signInLink: () => septad.signInLink(),
    stop: () => septad.stop(),
  };
}
