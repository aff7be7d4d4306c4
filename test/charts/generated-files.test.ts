import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CHART_DIR, helmBinary, parseObjects, REPO_ROOT } from './helm.js';

const run = promisify(execFile);

/** Every file under `dir` (relative paths, sorted), skipping the hand-written README.md files. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name !== 'README.md')
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

describe('generated copies stay in sync with their source', () => {
  test('when the chart ships CRDs, then they are byte-for-byte the files in crds/ (make chart-crds)', () => {
    const source = path.join(REPO_ROOT, 'crds');
    const copy = path.join(CHART_DIR, 'crds');
    expect(filesUnder(copy)).toEqual(filesUnder(source));
    for (const file of filesUnder(source)) {
      const same = readFileSync(path.join(copy, file), 'utf8') === readFileSync(path.join(source, file), 'utf8');
      if (!same) throw new Error(`charts/kapi-apiserver/crds/${file} differs from crds/${file}: run \`make chart-crds\``);
    }
  });

  describe('manifests/', () => {
    let rendered: string;
    beforeAll(async () => {
      rendered = mkdtempSync(path.join(tmpdir(), 'kapi-manifests-'));
      await run(path.join(REPO_ROOT, 'scripts', 'render-manifests.sh'), [helmBinary(), rendered], { timeout: 60_000 });
    });
    afterAll(() => {
      rmSync(rendered, { recursive: true, force: true });
    });

    test('when the chart is rendered again, then manifests/ is identical (make manifests)', () => {
      const committed = path.join(REPO_ROOT, 'manifests');
      expect(filesUnder(committed)).toEqual(filesUnder(rendered));
      for (const file of filesUnder(rendered)) {
        const same = readFileSync(path.join(committed, file), 'utf8') === readFileSync(path.join(rendered, file), 'utf8');
        if (!same) throw new Error(`manifests/${file} is stale: run \`make manifests\` and commit the result`);
      }
    });

    test('when applied with kubectl apply -f manifests/, then the Namespace and CRDs come first and no custom resource is in that apply', () => {
      const objects = parseObjects(readFileSync(path.join(rendered, 'kapi-apiserver.yaml'), 'utf8'));
      const kinds = objects.map((object) => object.kind);
      expect(kinds[0]).toBe('Namespace');
      expect(objects[0]!.metadata.name).toBe('kapi-system');
      expect(kinds.slice(1, 4)).toEqual(['CustomResourceDefinition', 'CustomResourceDefinition', 'CustomResourceDefinition']);
      const builtIn =
        /^(v1|apps\/v1|policy\/v1|networking\.k8s\.io\/v1|rbac\.authorization\.k8s\.io\/v1|apiextensions\.k8s\.io\/v1|admissionregistration\.k8s\.io\/v1)$/;
      expect(objects.filter((object) => !builtIn.test(object.apiVersion)).map((object) => object.kind)).toEqual([]);
      expect(kinds).toEqual(
        expect.arrayContaining([
          'ServiceAccount',
          'ClusterRole',
          'Role',
          'Service',
          'Deployment',
          'ValidatingAdmissionPolicy',
          'ValidatingAdmissionPolicyBinding',
        ]),
      );
    });

    test('when committed, then the manifests carry no Secret, no signing key and no admin User', () => {
      const objects = filesUnder(rendered).flatMap((file) => parseObjects(readFileSync(path.join(rendered, file), 'utf8')));
      expect(objects.filter((object) => object.kind === 'Secret' || object.kind === 'User')).toEqual([]);
    });

    test('when the CRDs are established, then config/ holds the default ClusterConfiguration kapi-system/kapi', () => {
      const objects = parseObjects(readFileSync(path.join(rendered, 'config', 'clusterconfiguration.yaml'), 'utf8'));
      expect(objects.map((object) => [object.kind, object.metadata.namespace, object.metadata.name])).toEqual([
        ['ClusterConfiguration', 'kapi-system', 'kapi'],
      ]);
    });
  });
});
