/**
 * The console's Toolbox → kubectl, made safe: `resources.kapi.io/v1alpha2/users/{me}/kubectl` makes the caller's own
 * pod in kapi's namespace (no credential, unprivileged, owned by the User), and its terminal hands the shell the
 * caller's own token on stdin with echo off. On a real kube-apiserver the kubelet stand-in runs the shell for real with
 * the real kubectl: `kubectl auth whoami` there names the caller, and a read the caller may not do is refused. The
 * sandbox's exec plays a shell that never reads a token: kapi then sends none and closes the terminal with the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { login } from './client.js';
import { KubeApiError } from '../../src/kube/client.js';
import { startE2E, waitFor, type E2E } from './harness.js';
import { assertTarget } from './target.js';

const PASSWORD = 'e2e-Kubectl-toolbox-1';
let e2e: E2E;
let operator: string;
let operatorToken: string;
let stranger: string;
let strangerToken: string;

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  operator = await e2e.createUser('toolbox-operator', PASSWORD);
  // the toolbox's right (platform admins hold it), and a read kubectl in the pod may then do as the operator
  await e2e.grant(operator, [
    { apiGroups: ['resources.kapi.io'], resources: ['users/kubectl'], verbs: ['get'] },
    { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list'] },
  ]);
  operatorToken = (await login(e2e.kapiUrl, operator, PASSWORD)).access_token;
  stranger = await e2e.createUser('toolbox-stranger', PASSWORD);
  strangerToken = (await login(e2e.kapiUrl, stranger, PASSWORD)).access_token;
}, 120_000);

afterAll(async () => {
  await e2e?.stop();
});

const kubectlPath = (user: string) => `/kapis/resources.kapi.io/v1alpha2/users/${user}/kubectl`;
const get = (path: string, token: string) =>
  fetch(`${e2e.kapiUrl}${path}`, { headers: { Authorization: `Bearer ${token}` } });

/**
 * The console's terminal WebSocket: what it shows, how it closed. The token in the Authorization header (the console's
 * server), or as a browser sends one, in a subprotocol beside another.
 */
function openTerminal(path: string, token: string, carried: 'header' | 'subprotocol' = 'header') {
  const url = `${e2e.kapiUrl.replace(/^http/, 'ws')}${path}`;
  const ws =
    carried === 'header'
      ? new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } })
      : new WebSocket(url, [
          'kapi.terminal',
          `base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}`,
        ]);
  const state = { shown: '', closed: undefined as { code: number; reason: string } | undefined };
  const refused = new Promise<number>((resolve) =>
    ws.on('unexpected-response', (req, res) => {
      resolve(res.statusCode ?? 0);
      req.destroy();
    }),
  );
  ws.on('message', (raw) => (state.shown += (JSON.parse(raw.toString()) as { Data: string }).Data));
  ws.on('close', (code, reason) => (state.closed = { code, reason: reason.toString() }));
  ws.on('error', () => undefined);
  const type = (text: string) => ws.send(JSON.stringify({ Op: 'stdin', Data: text }));
  return { ws, state, refused, type };
}

describe('when a user who may use the toolbox asks for their kubectl', () => {
  let answer: { namespace: string; pod: string; container: string };

  it('then kapi makes their own pod, holding no credential and owned by their User, and answers once it runs', async () => {
    const asked = get(kubectlPath(operator), operatorToken);
    const namespace = e2e.configuration.namespace;
    await e2e.runPodWhenMade(namespace, `kubectl-${operator}`);
    const response = await asked;
    expect(response.status).toBe(200);
    answer = (await response.json()) as typeof answer;
    expect(answer).toEqual({ namespace, pod: `kubectl-${operator}`, container: 'kubectl' });
    const pod = await e2e.admin.request<{
      metadata: { ownerReferences: { kind: string; name: string }[] };
      spec: {
        automountServiceAccountToken: boolean;
        volumes: { name: string }[];
        containers: { env?: { name: string }[]; securityContext: Record<string, unknown> }[];
      };
    }>({ path: `/api/v1/namespaces/${namespace}/pods/${answer.pod}` });
    expect(pod.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'User', name: operator })]);
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    // nothing but empty directories mounted, no variable but HOME
    expect(pod.spec.volumes.map((volume) => Object.keys(volume).sort())).toEqual([
      ['emptyDir', 'name'],
      ['emptyDir', 'name'],
    ]);
    expect(pod.spec.containers[0]?.env?.map((variable) => variable.name)).toEqual(['HOME']);
    expect(pod.spec.containers[0]?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    // asked again: the same pod
    const again = await get(kubectlPath(operator), operatorToken);
    expect(await again.json()).toEqual(answer);
  }, 90_000);

  it('then its terminal runs kubectl as the user: `kubectl auth whoami` names them, a read they may not do is refused, and the token is never shown', async () => {
    const path = `/kapis/terminal.kapi.io/v1alpha2/namespaces/${answer.namespace}/pods/${answer.pod}/exec?container=kubectl&shell=bash`;
    // as a browser carries the token: kubectl acts with it all the same
    const terminal = openTerminal(path, operatorToken, 'subprotocol');
    if (e2e.target === 'sandbox') {
      // the sandbox's shell never turns echo off and asks: kapi sends no token and says why
      await waitFor(() => terminal.state.closed !== undefined);
      expect(terminal.state.closed).toEqual({ code: 1011, reason: 'the kubectl pod’s shell did not start' });
      expect(terminal.state.shown).not.toContain(operatorToken);
      return;
    }
    await waitFor(() => terminal.ws.readyState === WebSocket.OPEN);
    terminal.type("kubectl auth whoami -o jsonpath='{.status.userInfo.username}'; echo ' <whoami'\r");
    await waitFor(() => terminal.state.shown.includes(`${operator} <whoami`));
    terminal.type('kubectl get secrets -n kube-system\r');
    await waitFor(
      () => /forbidden/i.test(terminal.state.shown) && terminal.state.shown.includes('cannot list resource "secrets"'),
    );
    expect(terminal.state.shown).toContain(`User "${operator}" cannot list resource "secrets"`);
    terminal.type('kubectl get namespace default -o name\r');
    await waitFor(() => terminal.state.shown.includes('namespace/default'));
    expect(terminal.state.shown).not.toContain(operatorToken);
    terminal.type('exit\r');
    await waitFor(() => terminal.state.closed !== undefined);
  }, 60_000);
});

describe('when anyone else reaches for that toolbox', () => {
  it('then another user is refused the pod and its terminal, and a user without the right is refused their own', async () => {
    expect((await get(kubectlPath(operator), strangerToken)).status).toBe(403);
    expect((await get(kubectlPath(stranger), strangerToken)).status).toBe(403);
    const terminal = openTerminal(
      `/kapis/terminal.kapi.io/v1alpha2/namespaces/${e2e.configuration.namespace}/pods/kubectl-${operator}/exec?container=kubectl`,
      strangerToken,
    );
    expect(await terminal.refused).toBe(403);
  });

  it('then neither the user nor another reaches the pod past kapi’s terminal: through kapi’s /api forwarding and straight at kube-apiserver, exec and delete are RBAC’s 403', async () => {
    const pod = `/api/v1/namespaces/${e2e.configuration.namespace}/pods/kubectl-${operator}`;
    const exec = `${pod}/exec?container=kubectl&command=sh&stdin=true&stdout=true`;
    for (const [who, token] of [
      [operator, operatorToken],
      [stranger, strangerToken],
    ] as const) {
      for (const [method, path] of [
        ['POST', exec],
        ['DELETE', pod],
      ] as const) {
        const forwarded = await fetch(`${e2e.kapiUrl}${path}`, {
          method,
          headers: { Authorization: `Bearer ${token}` },
        });
        expect([who, method, forwarded.status]).toEqual([who, method, 403]);
        const direct = await e2e.admin
          .request({
            method,
            path,
            headers: { 'Impersonate-User': who, 'Impersonate-Group': 'system:authenticated' },
          })
          .then(
            () => 200,
            (err: unknown) => (err instanceof KubeApiError ? err.code : 0),
          );
        expect([who, method, direct]).toEqual([who, method, 403]);
      }
    }
    // the pod is still there, and still the operator's
    expect((await get(kubectlPath(operator), operatorToken)).status).toBe(200);
  });

  it('then a name not the caller’s is a 403 Status, even one of no user (nothing is said about it)', async () => {
    const response = await get(kubectlPath('no-such-user-anywhere'), operatorToken);
    expect(response.status).toBe(403);
    expect(((await response.json()) as { kind: string }).kind).toBe('Status');
  });
});
