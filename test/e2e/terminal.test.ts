/**
 * The console's container terminal (terminal.kapi.io, KubeSphere's WebSocket framing) on the sandbox and on real
 * kube-apiservers, whose exec reaches the tests' kubelet stand-in: a caller with `create pods/exec` types `echo ok` and
 * reads `ok` back, a resize arrives at the container (`stty size`), `exit` ends the session; a caller without the
 * right, a pod or container that is not there, and the node shell are refused before any upgrade, each with a Status.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { login } from './client.js';
import { startE2E, waitFor, type E2E, type RunKubelet } from './harness.js';
import { assertTarget } from './target.js';

const PASSWORD = 'e2e-Terminal-password-1';
const POD = { name: 'terminal-pod', container: 'app' };
let e2e: E2E;
let kubelet: RunKubelet;
let operatorToken: string;
let strangerToken: string;

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  kubelet = await e2e.kubelet();
  // the stand-in knows the containers it has logs of
  kubelet.standIn.write(e2e.runId, POD.name, POD.container, [{ ms: Date.now(), nano: 0, text: 'started' }]);
  await e2e.createRunningPod(e2e.runId, POD.name, {
    nodeName: kubelet.nodeName,
    containers: [{ name: POD.container, image: 'busybox:1.36' }],
  });
  const operator = await e2e.createUser('terminal-operator', PASSWORD);
  // what a project operator holds for pods: exec is create (and, before 1.30, get over a WebSocket)
  await e2e.grant(operator, [{ apiGroups: [''], resources: ['pods/exec'], verbs: ['get', 'create'] }]);
  operatorToken = (await login(e2e.kapiUrl, operator, PASSWORD)).access_token;
  const stranger = await e2e.createUser('terminal-stranger', PASSWORD);
  strangerToken = (await login(e2e.kapiUrl, stranger, PASSWORD)).access_token;
}, 120_000);

afterAll(async () => {
  await e2e?.stop();
});

const terminalPath = (pod = POD.name, query = `container=${POD.container}&shell=sh`, namespace = e2e.runId) =>
  `/kapis/terminal.kapi.io/v1alpha2/namespaces/${namespace}/pods/${pod}/exec?${query}`;

/** A terminal as the console opens it: what it shows, what it was told on closing. */
function openTerminal(path: string, token: string) {
  const ws = new WebSocket(`${e2e.kapiUrl.replace(/^http/, 'ws')}${path}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  const state = {
    shown: '',
    ops: new Set<string>(),
    closed: undefined as { code: number; reason: string } | undefined,
  };
  const refused = new Promise<{ status: number; body: string }>((resolve) => {
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
  });
  ws.on('message', (raw) => {
    const message = JSON.parse(raw.toString()) as { Op: string; Data: string };
    state.ops.add(message.Op);
    state.shown += message.Data;
  });
  ws.on('close', (code, reason) => (state.closed = { code, reason: reason.toString() }));
  ws.on('error', () => undefined);
  const send = (message: Record<string, unknown>) => ws.send(JSON.stringify(message));
  return { ws, state, refused, send };
}

describe('when a caller with create pods/exec opens a container’s terminal', () => {
  it('then the shell’s prompt shows, `echo ok` round-trips, a resize reaches the container, and `exit` closes it', async () => {
    const terminal = openTerminal(terminalPath(), operatorToken);
    await waitFor(async () => terminal.state.shown.includes('$ '));
    terminal.send({ Op: 'resize', Rows: 33, Cols: 101 });
    for (const key of 'echo ok\r') terminal.send({ Op: 'stdin', Data: key });
    await waitFor(async () => terminal.state.shown.includes('echo ok\r\nok\r\n'));
    terminal.send({ Op: 'stdin', Data: 'stty size\r' });
    await waitFor(async () => terminal.state.shown.includes('33 101\r\n'));
    expect([...terminal.state.ops]).toEqual(['stdout']);
    if (e2e.target === 'cluster') {
      // kube-apiserver opened the exec on the kubelet: the shell asked for, and the size given
      const session = kubelet.standIn.execs.find((exec) => exec.pod === POD.name);
      expect(session?.command).toEqual(['sh']);
      expect(session?.resizes).toContainEqual({ rows: 33, cols: 101 });
    }
    terminal.send({ Op: 'stdin', Data: 'exit\r' });
    await waitFor(async () => terminal.state.closed !== undefined);
    expect(terminal.state.closed).toEqual({ code: 1000, reason: 'Process exited' });
  }, 60_000);

  it('then a message that is not the console’s closes the terminal with the reason', async () => {
    const terminal = openTerminal(terminalPath(), operatorToken);
    await waitFor(async () => terminal.state.shown.includes('$ '));
    terminal.ws.send('not json');
    await waitFor(async () => terminal.state.closed !== undefined);
    expect(terminal.state.closed).toEqual({ code: 1003, reason: 'a terminal message is JSON' });
  }, 60_000);
});

describe('when kube-apiserver refuses the exec (no 101)', () => {
  it('then the terminal shows its reason and closes with it', async () => {
    // a pod no node runs yet: kapi's checks pass (the right, the pod, the container), kube-apiserver refuses
    await e2e.admin.request({
      method: 'POST',
      path: `/api/v1/namespaces/${e2e.runId}/pods`,
      body: {
        metadata: { name: 'terminal-unscheduled' },
        spec: { containers: [{ name: POD.container, image: 'registry.invalid/e2e' }] },
      },
    });
    await waitFor(
      async () =>
        (
          await fetch(`${e2e.kapiUrl}${terminalPath('terminal-unscheduled')}`, {
            headers: { Authorization: `Bearer ${operatorToken}` },
          })
        ).status === 400,
    );
    const terminal = openTerminal(terminalPath('terminal-unscheduled'), operatorToken);
    await waitFor(async () => terminal.state.closed !== undefined);
    expect(terminal.state.closed?.code).toBe(1011);
    expect(terminal.state.closed?.reason).toContain('does not have a host assigned');
    expect(terminal.state.ops).toEqual(new Set(['toast']));
    expect(terminal.state.shown).toContain('does not have a host assigned');
  }, 60_000);
});

describe('when a terminal cannot be opened, then it is refused before any upgrade with a Status', () => {
  it.each([
    ['the caller may not exec there', () => [terminalPath(), strangerToken], 403, 'cannot create resource "pods/exec"'],
    ['the pod is not there', () => [terminalPath('no-such-pod'), operatorToken], 404, 'pods "no-such-pod" not found'],
    [
      'the container is not the pod’s',
      () => [terminalPath(POD.name, 'container=nope'), operatorToken],
      400,
      `container nope is not valid for pod ${POD.name}`,
    ],
    ['no token is given', () => [terminalPath(), ''], 401, ''],
  ])('when %s', async (_case, args, code, message) => {
    const [path, token] = args();
    const terminal = openTerminal(path!, token!);
    const refused = await terminal.refused;
    expect(refused.status).toBe(code);
    const status = JSON.parse(refused.body) as { kind: string; code: number; message: string };
    expect(status).toMatchObject({ kind: 'Status', code });
    expect(status.message).toContain(message);
  });

  it('when the console probes the route without an upgrade, then the same checks answer, then 400', async () => {
    const probe = (token: string, pod = POD.name) =>
      fetch(`${e2e.kapiUrl}${terminalPath(pod)}`, { headers: { Authorization: `Bearer ${token}` } });
    expect((await probe(operatorToken)).status).toBe(400);
    expect((await probe(strangerToken)).status).toBe(403);
    expect((await probe(operatorToken, 'no-such-pod')).status).toBe(404);
  });

  it('when a node’s shell is asked for, then it is not served (it would need a privileged pod on the node)', async () => {
    const terminal = openTerminal(`/kapis/terminal.kapi.io/v1alpha2/nodes/${kubelet.nodeName}/exec`, operatorToken);
    expect((await terminal.refused).status).toBe(404);
  });
});
