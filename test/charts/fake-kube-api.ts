/**
 * Just enough of kube-apiserver for `helm template --dry-run=server`: version, discovery of the kinds the chart
 * renders, and GET of the objects a test puts in. Helm's `lookup` reads them, as it does from a real cluster on
 * `helm upgrade`. Everything else is a 404 Status.
 */
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { KubeObject } from './helm.js';

interface Kind {
  groupVersion: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

const KINDS: readonly Kind[] = [
  { groupVersion: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true },
  { groupVersion: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true },
  { groupVersion: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
  { groupVersion: 'v1', plural: 'services', kind: 'Service', namespaced: true },
  { groupVersion: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false },
  { groupVersion: 'apps/v1', plural: 'deployments', kind: 'Deployment', namespaced: true },
  { groupVersion: 'admissionregistration.k8s.io/v1', plural: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false },
  { groupVersion: 'policy/v1', plural: 'poddisruptionbudgets', kind: 'PodDisruptionBudget', namespaced: true },
  { groupVersion: 'networking.k8s.io/v1', plural: 'networkpolicies', kind: 'NetworkPolicy', namespaced: true },
  { groupVersion: 'rbac.authorization.k8s.io/v1', plural: 'clusterroles', kind: 'ClusterRole', namespaced: false },
  { groupVersion: 'rbac.authorization.k8s.io/v1', plural: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false },
  { groupVersion: 'rbac.authorization.k8s.io/v1', plural: 'roles', kind: 'Role', namespaced: true },
  { groupVersion: 'rbac.authorization.k8s.io/v1', plural: 'rolebindings', kind: 'RoleBinding', namespaced: true },
  { groupVersion: 'apiextensions.k8s.io/v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false },
  { groupVersion: 'iam.kapi.io/v1beta1', plural: 'users', kind: 'User', namespaced: false },
  { groupVersion: 'iam.kapi.io/v1beta1', plural: 'loginsessions', kind: 'LoginSession', namespaced: false },
  { groupVersion: 'iam.kapi.io/v1alpha2', plural: 'globalroles', kind: 'GlobalRole', namespaced: false },
  { groupVersion: 'iam.kapi.io/v1alpha2', plural: 'globalrolebindings', kind: 'GlobalRoleBinding', namespaced: false },
  { groupVersion: 'tenant.kapi.io/v1alpha2', plural: 'workspacetemplates', kind: 'WorkspaceTemplate', namespaced: false },
  { groupVersion: 'installer.kapi.io/v1alpha1', plural: 'clusterconfigurations', kind: 'ClusterConfiguration', namespaced: true },
];

export interface FakeKubeApi {
  /** A kubeconfig file pointing at this server. */
  readonly kubeconfig: string;
  close(): Promise<void>;
}

function objectPath(object: KubeObject): string {
  const kind = KINDS.find((candidate) => candidate.kind === object.kind && candidate.groupVersion === object.apiVersion);
  if (!kind) throw new Error(`the fake API does not serve ${object.apiVersion} ${object.kind}`);
  const root = kind.groupVersion === 'v1' ? '/api/v1' : `/apis/${kind.groupVersion}`;
  const scope = kind.namespaced ? `/namespaces/${object.metadata.namespace}` : '';
  return `${root}${scope}/${kind.plural}/${object.metadata.name}`;
}

function discovery(pathname: string): unknown {
  if (pathname === '/version') return { major: '1', minor: '35', gitVersion: 'v1.35.0', platform: 'linux/amd64' };
  if (pathname === '/api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
  const groupVersions = [...new Set(KINDS.map((kind) => kind.groupVersion))];
  if (pathname === '/apis') {
    const groups = groupVersions
      .filter((groupVersion) => groupVersion.includes('/'))
      .map((groupVersion) => {
        const [name, version] = groupVersion.split('/') as [string, string];
        return { name, versions: [{ groupVersion, version }], preferredVersion: { groupVersion, version } };
      });
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }
  const groupVersion = pathname === '/api/v1' ? 'v1' : pathname.replace(/^\/apis\//, '');
  if (!groupVersions.includes(groupVersion)) return undefined;
  const resources = KINDS.filter((kind) => kind.groupVersion === groupVersion).map((kind) => ({
    name: kind.plural,
    singularName: kind.kind.toLowerCase(),
    namespaced: kind.namespaced,
    kind: kind.kind,
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  }));
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources };
}

/** Serves `objects` on 127.0.0.1 (ephemeral port) and writes a kubeconfig for it into `dir`. */
export async function startFakeKubeApi(objects: readonly KubeObject[], dir: string): Promise<FakeKubeApi> {
  const stored = new Map(objects.map((object) => [objectPath(object), object]));
  const server = http.createServer((req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://fake');
    const body = req.method === 'GET' ? (stored.get(pathname) ?? discovery(pathname)) : undefined;
    res.setHeader('Content-Type', 'application/json');
    if (body === undefined) {
      res.statusCode = 404;
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
      return;
    }
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'fake', cluster: { server: `http://127.0.0.1:${port}` } }],
      users: [{ name: 'fake', user: { token: 'fake-token' } }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake' } }],
      'current-context': 'fake',
    }),
    { mode: 0o600 },
  );
  return {
    kubeconfig,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
