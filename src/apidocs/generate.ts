import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CRD_DOCUMENT_FILE,
  PLATFORM_DOCUMENT_FILE,
  crdDocument,
  documentText,
  packageRoot,
  platformDocument,
} from './documents.js';

/**
 * `make api-docs`: writes both documents under api/. With `--check`, writes nothing and fails when a committed copy
 * differs from what the code and crds/ give now (`make test` runs it).
 */
const root = packageRoot();
const check = process.argv.includes('--check');
let stale = 0;
for (const [file, document] of [
  [PLATFORM_DOCUMENT_FILE, platformDocument(root)],
  [CRD_DOCUMENT_FILE, crdDocument(root)],
] as const) {
  const text = documentText(document);
  const path = join(root, file);
  if (!check) {
    writeFileSync(path, text);
    process.stdout.write(`wrote ${file}\n`);
    continue;
  }
  let committed = '';
  try {
    committed = (await import('node:fs')).readFileSync(path, 'utf8');
  } catch {
    // missing counts as stale
  }
  if (committed !== text) {
    stale++;
    process.stderr.write(`${file} is stale: run \`make api-docs\` and commit it\n`);
  }
}
process.exit(stale > 0 ? 1 : 0);
