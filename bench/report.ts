import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export type Verdict = 'pass' | 'MISS' | 'info' | 'not measured';

/** One line of the summary table. */
export interface Row {
  metric: string;
  value: string;
  target: string;
  verdict: Verdict;
  /** KubeSphere ks-apiserver 3.4.1's figure from SPEC §11, where there is one. */
  reference?: string;
}

export function verdict(ok: boolean): Verdict {
  return ok ? 'pass' : 'MISS';
}

/** A row whose figure could not be taken; the reason is the value, so the table says why. */
export function notMeasured(metric: string, target: string, why: string, reference?: string): Row {
  return { metric, value: `not measured: ${why}`, target, verdict: 'not measured', reference };
}

/** What each scenario prints as it finishes: indented detail lines under a heading. */
export function section(title: string): void {
  console.log(`\n== ${title}`);
}

export function detail(line: string): void {
  console.log(`   ${line}`);
}

const MAX_VALUE = 60;

export function printTable(rows: readonly Row[]): void {
  const cells = rows.map((row) => [
    row.metric,
    row.value.length > MAX_VALUE ? `${row.value.slice(0, MAX_VALUE - 1)}…` : row.value,
    row.target,
    row.verdict,
    row.reference ?? '',
  ]);
  const header = ['what', 'measured', 'target', 'result', 'reference (ks-apiserver 3.4.1)'];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] as string).length)));
  const line = (c: string[]) =>
    c
      .map((cell, i) => cell.padEnd(widths[i] as number))
      .join(' | ')
      .trimEnd();
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const c of cells) console.log(line(c));
  // Long reasons are cut in the table; they are printed whole here.
  for (const row of rows) if (row.value.length > MAX_VALUE) console.log(`  * ${row.metric}: ${row.value}`);
}

export function writeJson(file: string, data: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
}
