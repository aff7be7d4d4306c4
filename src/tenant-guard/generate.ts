import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { packageRoot } from '../apidocs/documents.js';
import { GUARD_FILES_DIR, guardFileText } from './chart-files.js';
import { GUARD_API_VERSIONS } from './policy.js';

/**
 * `make tenant-guard`: writes the tenant guard's policy and binding, one file per admissionregistration version, into
 * the chart (charts/kapi-apiserver/files/tenant-guard/<version>.yaml), with the placeholder `USERNAME_PLACEHOLDER`
 * where the chart puts kapi's ServiceAccount. With `--check`, writes nothing and fails when a committed file differs
 * from what policy.ts gives now (`make test` runs it): the chart installs exactly what kapi checks for.
 */
const root = packageRoot();
const check = process.argv.includes('--check');
let stale = 0;
for (const version of GUARD_API_VERSIONS) {
  const file = join(GUARD_FILES_DIR, `${version}.yaml`);
  const path = join(root, file);
  const text = guardFileText(version);
  if (!check) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    process.stdout.write(`wrote ${file}\n`);
    continue;
  }
  let committed = '';
  try {
    committed = readFileSync(path, 'utf8');
  } catch {
    // missing counts as stale
  }
  if (committed !== text) {
    stale++;
    process.stderr.write(`${file} is stale: run \`make tenant-guard\` and commit it\n`);
  }
}
process.exit(stale > 0 ? 1 : 0);
