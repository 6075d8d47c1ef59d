// Unit tests: compile test/*.test.ts and the pure modules they import to
// CommonJS in .test-build (tsc, no loader tricks: robust on Node 20), then
// run them with node --test, whose summary CI reads.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const out = '.test-build';
rmSync(out, { recursive: true, force: true });
const tsc = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.test.json'], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'package.json'), '{"type":"commonjs"}\n');
const tests = readdirSync(join(out, 'test')).filter((f) => f.endsWith('.test.js')).map((f) => join(out, 'test', f));
if (tests.length === 0) {
  console.error('unit: no tests compiled');
  process.exit(1);
}
const run = spawnSync(process.execPath, ['--test', ...tests], { stdio: 'inherit' });
process.exit(run.status ?? 1);
