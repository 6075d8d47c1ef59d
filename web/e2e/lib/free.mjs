// The free-capacity tables of the portal (components/FreeTable.tsx) and what
// septad's FreeCapacity says they hold, both as [row key, the numbers in the
// row], so that a test compares the page with a REST read and the wording
// stays the unit tests' concern (test/free.test.ts).

const numbers = (text) => (text.match(/\d+(?:\.\d+)?/g) ?? []).map(Number);

/** The rows of the table for `sharing` (FRACTIONAL, MIG, WHOLE_GPU, WHOLE_NODE) on the current page. */
export async function freeTable(page, sharing) {
  const table = page.locator(`[data-free-capacity="${sharing}"]`);
  await table.waitFor();
  const rows = await table.locator('tr').evaluateAll((trs) => trs.map((tr) => [tr.dataset.free, tr.querySelector('td').textContent]));
  return rows.map(([key, text]) => [key, numbers(text)]);
}

/** The rows a FreeCapacity must give. protobuf's JSON omits zeros and empty lists; int64 fields are strings. */
export function expectedFree(free) {
  const n = (v) => Number(v ?? 0);
  let rows;
  switch (free.gpu_sharing) {
    case 'FRACTIONAL':
      rows = (free.shared ?? []).map((s) => [s.model, [n(s.milli_gpu) / 1000, n(s.gpus), n(s.largest_milli_gpu) / 1000, n(s.gpu_memory_mib), n(s.largest_gpu_memory_mib)]]);
      break;
    case 'MIG':
      rows = (free.mig ?? []).map((m) => [`${m.model}/${m.profile}`, [n(m.count)]]);
      break;
    default:
      rows = ((free.gpu_sharing === 'WHOLE_GPU' ? free.gpus : free.nodes) ?? []).map((c) => [c.model, [n(c.count)]]);
  }
  return rows.length ? rows : [['', []]];
}
