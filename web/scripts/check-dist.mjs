// Fails when the built index.html would need CSP exceptions: an inline
// <script> (no src), a <style> element, or any style= attribute; and when any
// built JS or CSS file uses eval-like constructs the CSP forbids; and when the
// page links no icon that dist holds.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const dist = process.argv[2] ?? 'dist';
const html = readFileSync(join(dist, 'index.html'), 'utf8');
const problems = [];

for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
  if (!/\bsrc\s*=/.test(m[1]) || m[2].trim()) problems.push(`inline <script>: ${m[0].slice(0, 80)}`);
}
if (/<style\b/i.test(html)) problems.push('a <style> element');
if (/\sstyle\s*=/i.test(html)) problems.push('a style= attribute');
if (/\son[a-z]+\s*=/i.test(html)) problems.push('an inline event handler attribute');
// Without a linked icon Chromium requests /favicon.ico, and its 404 is a console error.
const icon = /<link rel="icon" href="\/([^"]+)"/.exec(html)?.[1];
if (!icon || !existsSync(join(dist, icon))) problems.push(`no icon linked or ${icon} missing from dist`);

const assets = join(dist, 'assets');
for (const f of readdirSync(assets)) {
  if (!f.endsWith('.js')) continue;
  const js = readFileSync(join(assets, f), 'utf8');
  if (/\beval\(|new Function\(/.test(js)) problems.push(`${f}: eval or new Function`);
}

if (problems.length) {
  console.error(`check-dist: ${dist} breaks the CSP or lacks its icon:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`check-dist: ${dist} has no inline script, style or eval, and its icon`);
