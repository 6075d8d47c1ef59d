// The app's size budget of issue 35: JS and CSS at most 120 KB gzipped. A
// size does not vary with the machine, so unlike the timings (bench/) it is
// a test.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { WEB_DIST } from './lib/septad.mjs';

const BUDGET_GZIP_BYTES = 120 * 1024;

it('the app’s JS and CSS are at most 120 KB gzipped', () => {
  const assets = join(WEB_DIST, 'assets');
  let bytes = 0;
  for (const f of readdirSync(assets)) if (/\.(js|css)$/.test(f)) bytes += gzipSync(readFileSync(join(assets, f)), { level: 9 }).length;
  console.log(`# bundle: ${(bytes / 1024).toFixed(1)} KiB gzipped (JS+CSS)`);
  assert.ok(bytes <= BUDGET_GZIP_BYTES, `${bytes} B`);
});

