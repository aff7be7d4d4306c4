/**
 * What kapi loads at start. Every module a process loads stays in its heap for good (its source text, its code), so
 * the clients of optional backends are loaded when one is named or first used, never by the static imports from
 * `src/main.ts`: the OpenSearch client (hundreds of modules) only with a log store, Prometheus's PromQL grammar only
 * with an ad-hoc query. The listings' memory target (SPEC §11) is measured with neither.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const SRC = resolve('src');

/** The packages and own files reached from `entry` by static imports (a type-only import or `import()` is not one). */
function staticGraph(entry: string): { files: Set<string>; packages: Map<string, string> } {
  const files = new Set<string>();
  const packages = new Map<string, string>();
  const importPattern = /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(importPattern)) {
      if (spec!.startsWith('.')) visit(join(dirname(file), spec!.replace(/\.js$/, '.ts')));
      else if (!spec!.startsWith('node:')) {
        const name = spec!
          .split('/')
          .slice(0, spec!.startsWith('@') ? 2 : 1)
          .join('/');
        if (!packages.has(name)) packages.set(name, file.slice(SRC.length + 1));
      }
    }
  };
  visit(entry);
  return { files, packages };
}

describe('the modules kapi loads at start', () => {
  const { files, packages } = staticGraph(join(SRC, 'main.ts'));

  it('when walked from src/main.ts, then the graph is kapi’s own (the walk reads its imports)', () => {
    expect(files.size).toBeGreaterThan(100);
    expect(files).toContain(join(SRC, 'apis/logging/v1alpha2/search/search-response.ts'));
    expect(files).toContain(join(SRC, 'apis/monitoring/promql/enforce.ts'));
    expect([...packages.keys()]).toEqual(expect.arrayContaining(['express', 'zod', 'ws']));
  });

  it.each([
    ['@opensearch-project/opensearch', 'the OpenSearch client (a log store named)'],
    ['@prometheus-io/lezer-promql', 'the PromQL grammar (an ad-hoc monitoring query)'],
  ])('then %s is not among them: %s loads it', (name) => {
    expect({ name, importedBy: packages.get(name) }).toEqual({ name, importedBy: undefined });
  });

  it('then the modules that load them are reached only through import()', () => {
    expect(files).not.toContain(join(SRC, 'apis/logging/v1alpha2/search/search-backend.ts'));
    expect(files).not.toContain(join(SRC, 'apis/monitoring/promql/parse.ts'));
  });
});
