/**
 * The real kubectl through a real kapi (OAuth login, JWT, the cluster's RBAC) over kapi's HTTPS listener, against the
 * sandbox or the cluster KUBECONFIG names: reads, watches and writes work for a user whose RBAC allows them and are
 * refused for one whose RBAC does not, and kube-apiserver sees the kapi user (`auth whoami`), never kapi's service
 * account. On the sandbox its audit trail also shows who made each request and who impersonated them.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1ConfigMap, V1PodList } from '@kubernetes/client-node';
import { KubeApiError } from '../../src/kube/client.js';
import { KAPI_SERVICE_ACCOUNT } from '../../src/sandbox/policy.js';
import { login } from './client.js';
import { auditSince, isBackground } from './forwarding-audit.js';
import { Kubectl } from './forwarding-kubectl.js';
import { RUN_LABEL, startE2E, waitFor, type E2E } from './harness.js';
import { assertTarget, E2E_TARGET, itOnSandbox } from './target.js';

const PASSWORD = 'e2e-Kubectl-password-1';
const OPERATORS = 'e2e-operators';
/** Discovery paths: `/api[/v1]`, `/apis`, `/apis/<group>[/<version>]`, `/version`, `/openapi/...`. */
const DISCOVERY = /^\/(api(\/v1)?|apis(\/[^/]+){0,2}|version|openapi(\/.*)?)$/;

let e2e: E2E;
let kubectl: Kubectl;
let operator: string;
let operatorToken: string;
let outsider: string;
let outsiderToken: string;

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  kubectl = Kubectl.create(e2e.kapiHttpsUrl, e2e.caFile);
  operator = await e2e.createUser('kubectl-operator', PASSWORD, { groups: [OPERATORS] });
  await e2e.grant(operator, [
    { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get', 'patch', 'delete'] },
    ...(E2E_TARGET === 'sandbox'
      ? [
          { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
          // kube 1.35 authorizes a WebSocket exec as get and create.
          { apiGroups: [''], resources: ['pods/exec'], verbs: ['get', 'create'] },
        ]
      : []),
  ]);
  outsider = await e2e.createUser('kubectl-outsider', PASSWORD);
  operatorToken = (await login(e2e.kapiUrl, operator, PASSWORD)).access_token;
  outsiderToken = (await login(e2e.kapiUrl, outsider, PASSWORD)).access_token;
});

afterAll(async () => {
  kubectl?.cleanup();
  await e2e?.stop();
});

function configMapManifest(name: string, colour: string): string {
  return [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    `  name: ${name}`,
    `  namespace: ${e2e.runId}`,
    '  labels:',
    `    ${RUN_LABEL}: ${e2e.runId}`,
    'data:',
    `  colour: ${colour}`,
    '',
  ].join('\n');
}

async function configMap(name: string): Promise<V1ConfigMap | undefined> {
  try {
    return await e2e.admin.request<V1ConfigMap>({ path: `/api/v1/namespaces/${e2e.runId}/configmaps/${name}` });
  } catch (error) {
    if (error instanceof KubeApiError && error.code === 404) return undefined;
    throw error;
  }
}

describe('when a user whose RBAC allows it uses kubectl through kapi', () => {
  it('then kubectl get nodes lists the nodes of the cluster (this run’s, by its label)', async () => {
    const names = [await e2e.createNode('kubectl-listed-b'), await e2e.createNode('kubectl-listed-a')];
    const run = await kubectl.run(['get', 'nodes', '-l', `${RUN_LABEL}=${e2e.runId}`, '-o', 'name'], operatorToken);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // the first case of this file: the run has no other nodes yet; kube-apiserver lists them by name
    expect(run.stdout).toBe(
      names
        .sort()
        .map((name) => `node/${name}\n`)
        .join(''),
    );
  });

  it('then kubectl get nodes -w prints a change made through the Kubernetes API while it watches', async () => {
    const name = e2e.name('kubectl-watched');
    await e2e.admin.request({
      method: 'POST',
      path: '/api/v1/nodes',
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { [RUN_LABEL]: e2e.runId } } },
    });
    const audit = e2e.sandbox && auditSince(e2e.sandbox);
    const child = kubectl.spawn(
      [
        'get',
        'nodes',
        '-w',
        '-l',
        `${RUN_LABEL}=${e2e.runId}`,
        '-o',
        'jsonpath={.metadata.name}={.metadata.labels.changed}{"\\n"}',
      ],
      operatorToken,
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const lines = () => stdout.split('\n');
    try {
      // The first line comes from kubectl's list; it then watches from the list's resourceVersion, so the change
      // below reaches it whether or not the watch request has arrived yet. (A real cluster's node controller may
      // print more lines for the same node; only the label tells this change apart.)
      await waitFor(() => lines().includes(`${name}=`));
      await e2e.admin.request({
        method: 'PATCH',
        path: `/api/v1/nodes/${name}`,
        contentType: 'application/merge-patch+json',
        body: { metadata: { labels: { changed: 'yes' } } },
      });
      await waitFor(() => lines().includes(`${name}=yes`));
    } finally {
      child.kill('SIGKILL');
    }
    if (audit) {
      const watches = audit().filter((entry) => entry.path === '/api/v1/nodes' && !isBackground(entry));
      expect(watches.map((entry) => entry.verb)).toEqual(['list', 'watch']);
      for (const entry of watches) {
        expect(entry).toMatchObject({ user: operator, impersonatedBy: KAPI_SERVICE_ACCOUNT, code: 200 });
      }
    }
  }, 30_000);

  it('then kubectl apply creates a ConfigMap, a changed file is configured, the same file is unchanged, and kubectl delete removes it', async () => {
    const name = e2e.name('kubectl-applied');
    const first = kubectl.writeManifest('first.yaml', configMapManifest(name, 'blue'));
    const second = kubectl.writeManifest('second.yaml', configMapManifest(name, 'green'));

    const created = await kubectl.run(['apply', '-f', first], operatorToken);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout.trim()).toBe(`configmap/${name} created`);
    expect((await configMap(name))?.data).toEqual({ colour: 'blue' });

    const configured = await kubectl.run(['apply', '-f', second], operatorToken);
    expect(configured).toMatchObject({ code: 0, stderr: '' });
    expect(configured.stdout.trim()).toBe(`configmap/${name} configured`);
    expect((await configMap(name))?.data).toEqual({ colour: 'green' });

    const unchanged = await kubectl.run(['apply', '-f', second], operatorToken);
    expect(unchanged).toMatchObject({ code: 0, stderr: '' });
    expect(unchanged.stdout.trim()).toBe(`configmap/${name} unchanged`);

    // --wait=false: waiting for the deletion would need list and watch, which this user was not granted.
    const deleted = await kubectl.run(['delete', '-f', second], operatorToken);
    expect(deleted).toMatchObject({ code: 0, stderr: '' });
    expect(deleted.stdout).toContain(`configmap "${name}" deleted`);
    expect(await configMap(name)).toBeUndefined();
  }, 30_000);

  it('then kubectl auth whoami shows the kapi user and its groups, not kapi’s service account', async () => {
    const audit = e2e.sandbox && auditSince(e2e.sandbox);
    const run = await kubectl.run(['auth', 'whoami', '-o', 'json'], operatorToken);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const review = JSON.parse(run.stdout) as { status: { userInfo: { username: string; groups: string[] } } };
    expect(review.status.userInfo.username).toBe(operator);
    expect(review.status.userInfo.groups).toEqual(expect.arrayContaining([OPERATORS, 'system:authenticated']));
    expect(review.status.userInfo.groups).not.toContain('system:serviceaccounts');
    if (audit) {
      // kubectl tries v1, then v1beta1, then v1alpha1 (a 404 each where an older release does not serve them)
      const reviews = audit().filter((entry) => entry.path.endsWith('/selfsubjectreviews') && entry.code !== 404);
      expect(reviews).toHaveLength(1);
      expect(reviews[0]).toMatchObject({ user: operator, impersonatedBy: KAPI_SERVICE_ACCOUNT, code: 201 });
      expect(reviews[0]!.groups).toEqual(expect.arrayContaining([OPERATORS, 'system:authenticated']));
    }
  });

  it('then kubectl --as=admin is refused by kapi with 403 and kube-apiserver never sees an admin request', async () => {
    const audit = e2e.sandbox && auditSince(e2e.sandbox);
    const run = await kubectl.run(['--as=admin', 'get', 'nodes'], operatorToken);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/\(Forbidden\).*impersonation through kapi is not allowed/);
    if (audit) expect(audit().filter((entry) => entry.user === 'admin')).toEqual([]);
  });

  itOnSandbox('a running container to exec into (a kubelet with a container runtime)')(
    'then kubectl exec relays stdin and stdout',
    async () => {
      const pods = await e2e.admin.request<V1PodList>({
        path: '/api/v1/pods',
        query: { fieldSelector: 'status.phase=Running', limit: 1 },
      });
      const pod = pods.items[0]!;
      const audit = auditSince(e2e.sandbox!);
      const run = await kubectl.run(
        [
          'exec',
          '-i',
          '-n',
          pod.metadata!.namespace!,
          pod.metadata!.name!,
          '-c',
          pod.spec!.containers[0]!.name,
          '--',
          'cat',
        ],
        operatorToken,
        { stdin: 'hello through kapi\n' },
      );
      expect(run).toEqual({ code: 0, stdout: 'hello through kapi\n', stderr: '' });
      const exec = audit().filter((entry) => entry.path.endsWith(`/pods/${pod.metadata!.name}/exec`));
      expect(exec.at(-1)).toMatchObject({ user: operator, impersonatedBy: KAPI_SERVICE_ACCOUNT, code: 101 });
    },
    30_000,
  );
});

describe('when a user whose RBAC does not allow it uses kubectl through kapi', () => {
  it('then kubectl get nodes fails with kube-apiserver’s Forbidden naming that user', async () => {
    const run = await kubectl.run(['get', 'nodes'], outsiderToken);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      `Error from server (Forbidden): nodes is forbidden: User "${outsider}" cannot list resource "nodes"`,
    );
  });

  it('then kubectl apply fails with Forbidden and nothing is created', async () => {
    const name = e2e.name('kubectl-refused');
    const manifest = kubectl.writeManifest('refused.yaml', configMapManifest(name, 'red'));
    const run = await kubectl.run(['apply', '-f', manifest], outsiderToken);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Error from server (Forbidden)');
    expect(run.stderr).toContain(`User "${outsider}" cannot get resource "configmaps"`);
    expect(await configMap(name)).toBeUndefined();
  });
});

describe('when kubectl presents a token kapi did not issue', () => {
  it('then it fails with Unauthorized and kube-apiserver never sees the request', async () => {
    const audit = e2e.sandbox && auditSince(e2e.sandbox);
    const run = await kubectl.run(['get', 'nodes'], 'not-a-kapi-token');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('error: You must be logged in to the server (Unauthorized)');
    if (audit) {
      // Only background traffic reached the sandbox. kapi itself never asks for discovery, kubectl's first request:
      // had kapi forwarded that even as itself, without impersonating, it would show here.
      expect(audit().filter((entry) => !isBackground(entry))).toEqual([]);
      expect(audit().filter((entry) => DISCOVERY.test(entry.path))).toEqual([]);
    }
  });
});
