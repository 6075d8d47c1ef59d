import { test } from 'node:test';
import assert from 'node:assert/strict';
import { csvField, csvFileName, poolCsv, toCsv, usageCsv } from '../src/lib/csv';

test('RFC 4180: quoted only when needed, quotes doubled, CRLF after every line', () => {
  assert.equal(csvField('plain'), 'plain');
  assert.equal(csvField('a,b'), '"a,b"');
  assert.equal(csvField('say "hi"'), '"say ""hi"""');
  assert.equal(csvField('two\nlines'), '"two\nlines"');
  assert.equal(csvField('cr\rhere'), '"cr\rhere"');
  assert.equal(csvField(undefined), '');
  assert.equal(csvField(null), '');
  assert.equal(csvField(0.1 + 0.2), '0.30000000000000004', 'full precision');
  assert.equal(toCsv(['a', 'b'], [[1, 'x,y'], ['', null]]), 'a,b\r\n1,"x,y"\r\n,\r\n');
  assert.equal(toCsv(['a'], []), 'a\r\n', 'the header alone when there are no rows');
});

test('a tenant report by virtual cluster has septactl’s columns; absent figures are 0, an unmeasured efficiency "-"', () => {
  const csv = usageCsv({
    currency: 'USD',
    items: [
      { start: '2026-11-29T10:00:00Z', end: '2026-11-29T10:01:00Z', vcluster: 'train', allocated_gpu_hours: 1 / 60, used_gpu_hours: 0.008, waste_gpu_hours: 0.008, efficiency: 0.5, coverage: 0.96, cost: 0.06 },
      { start: '2026-11-29T10:00:00Z', end: '2026-11-29T10:01:00Z', vcluster: 'idle', allocated_gpu_hours: 0.5 },
    ],
  });
  assert.equal(
    csv,
    'start,end,vcluster,allocated_gpu_hours,used_gpu_hours,waste_gpu_hours,efficiency,coverage,cost,currency\r\n' +
      `2026-11-29T10:00:00Z,2026-11-29T10:01:00Z,train,${1 / 60},0.008,0.008,0.5,0.96,0.06,USD\r\n` +
      '2026-11-29T10:00:00Z,2026-11-29T10:01:00Z,idle,0.5,0,0,-,0,0,USD\r\n',
  );
  const byTenant = usageCsv({ currency: 'EUR', items: [{ tenant: 'acme', allocated_gpu_hours: 2 }] });
  assert.ok(byTenant.startsWith('start,end,tenant,allocated_gpu_hours,'), byTenant);
  assert.equal(usageCsv({}), 'start,end,allocated_gpu_hours,used_gpu_hours,waste_gpu_hours,efficiency,coverage,cost,currency\r\n');
});

test('the pool: model "all" when not grouped by model', () => {
  assert.equal(
    poolCsv([{ start: 's', end: 'e', capacity_gpu_hours: 10, reserved_gpu_hours: 2, unreserved_gpu_hours: 8 }]),
    'start,end,model,capacity_gpu_hours,reserved_gpu_hours,unreserved_gpu_hours,used_gpu_hours\r\ns,e,all,10,2,8,0\r\n',
  );
});

test('file names carry the window without colons', () => {
  assert.equal(csvFileName('usage-acme', '2026-11-22T14:00:00Z', '2026-11-29T14:00:00Z'), 'usage-acme-2026-11-22T14-00Z-2026-11-29T14-00Z.csv');
  assert.equal(csvFileName('usage-a b', '2026-11-22T14:00:30Z', 'x'), 'usage-a_b-2026-11-22T14-00-30Z-x.csv');
});
