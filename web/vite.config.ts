import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

// The CSP septad sends forbids inline scripts and styles, so the build must
// emit only external files: no module-preload polyfill (it is inlined) and
// no asset inlined as a data: URL into JS or CSS.
export default defineConfig({
  plugins: [preact({ prerender: { enabled: false } })],
  build: {
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
});
