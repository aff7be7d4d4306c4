import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

export interface CrdDocument {
  metadata: { name: string; annotations?: Record<string, string> };
  [key: string]: unknown;
}

/** The CRDs this repository ships, as objects. */
export function loadCrdDocuments(dir = join(process.cwd(), 'crds')): CrdDocument[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((doc) => doc.toJSON() as CrdDocument),
    )
    .filter((doc) => doc && (doc as { kind?: string }).kind === 'CustomResourceDefinition');
}
