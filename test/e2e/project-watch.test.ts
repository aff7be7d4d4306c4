/**
 * A member's live project list (the console's WebSocket watch of a workspace's namespaces), on the sandbox and on real
 * kube-apiservers: one who may watch every namespace gets kube-apiserver's own watch; a member gets the workspace's
 * projects it may see, and sees a project given (ADDED), changed (MODIFIED) and taken (DELETED); one with no project
 * there is refused with a Status, as kube-apiserver refuses a member a watch of every namespace.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { bindGlobalRole, deleteIgnoringMissing, startE2E, waitFor, type E2E } from './harness.js';
import { KapiCaller } from './identity-http.js';
import { assertTarget } from './target.js';

const PASSWORD = 'e2e-Watch-Passw0rd';
const TENANT3 = '/kapis/tenant.kapi.io/v1alpha3';
const TENANT2 = '/kapis/tenant.kapi.io/v1alpha2';
const IAM = '/kapis/iam.kapi.io/v1alpha2';
let e2e: E2E;
const tokens: Record<string, string> = {};
const users: Record<string, string> = {};
const made: string[] = [];
let ws: string;
let p1: string;
let p2: string;
const opened: WebSocket[] = [];

async function send(method: string, path: string, who: string, body?: unknown) {
  const res = await fetch(`${e2e.kapiUrl}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${tokens[who]}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res.status;
}

interface Seen {
  events: { type: string; name: string; description?: string }[];
  refused?: { status: number; body: string };
}

/** The console's watch of the workspace's projects, as `who`. */
function watchProjects(who: string): Seen {
  const seen: Seen = { events: [] };
  const url = `${e2e.kapiUrl.replace(/^http/, 'ws')}/api/v1/watch/namespaces?labelSelector=kapi.io/workspace=${ws}`;
  // a browser's WebSocket carries its Origin (kube-apiserver's watch refuses one without)
  const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${tokens[who]}` }, origin: e2e.kapiUrl });
  opened.push(socket);
  socket.on('message', (raw) => {
    const event = JSON.parse(raw.toString()) as {
      type: string;
      object: { kind: string; metadata: { name: string; annotations?: Record<string, string> } };
    };
    expect(event.object.kind).toBe('Namespace');
    seen.events.push({
      type: event.type,
      name: event.object.metadata.name,
      description: event.object.metadata.annotations?.['kapi.io/description'],
    });
  });
  socket.on('unexpected-response', (_req, res) => {
    let body = '';
    res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    res.on('end', () => (seen.refused = { status: res.statusCode ?? 0, body }));
  });
  socket.on('error', () => undefined);
  return seen;
}

const has = (seen: Seen, type: string, name: string) => seen.events.some((e) => e.type === type && e.name === name);

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  const caller = new KapiCaller();
  for (const who of ['root', 'alice', 'bob', 'carol']) users[who] = await e2e.createUser(`w-${who}`, PASSWORD);
  made.push(await bindGlobalRole(e2e.admin, users.root as string, 'platform-admin'));
  for (const who of Object.keys(users))
    tokens[who] = (await caller.login(e2e.kapiUrl, users[who] as string, PASSWORD)).access_token;
  ws = e2e.name('watch-ws');
  p1 = e2e.name('watch-p1');
  p2 = e2e.name('watch-p2');
  made.push(
    `/apis/tenant.kapi.io/v1alpha2/workspacetemplates/${ws}`,
    `/api/v1/namespaces/${p1}`,
    `/api/v1/namespaces/${p2}`,
  );
  await waitFor(
    async () =>
      (await send('POST', `${TENANT3}/workspacetemplates`, 'root', {
        metadata: { name: ws },
        spec: { template: { spec: { manager: users.alice } } },
      })) === 201,
  );
  for (const project of [p1, p2])
    await waitFor(
      async () =>
        (await send('POST', `${TENANT2}/workspaces/${ws}/namespaces`, 'alice', {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: project },
        })) === 201,
    );
  expect(
    await send('POST', `${IAM}/namespaces/${p1}/members`, 'alice', [{ username: users.bob, roleRef: 'viewer' }]),
  ).toBe(200);
}, 120_000);

afterAll(async () => {
  for (const socket of opened) socket.terminate();
  for (const path of made.reverse()) await deleteIgnoringMissing(e2e.admin, path);
  await e2e?.stop();
});

describe('when a member watches its workspace’s projects, as the console’s project list does', () => {
  it('then it sees its project, a project given, a change, and a project taken; never the others', async () => {
    const bob = watchProjects('bob');
    await waitFor(async () => has(bob, 'ADDED', p1));
    expect(has(bob, 'ADDED', p2)).toBe(false);
    // p2 given
    expect(
      await send('POST', `${IAM}/namespaces/${p2}/members`, 'alice', [{ username: users.bob, roleRef: 'viewer' }]),
    ).toBe(200);
    await waitFor(async () => has(bob, 'ADDED', p2));
    // p1 changed
    await e2e.admin.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${p1}`,
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { 'kapi.io/description': 'changed' } } },
    });
    await waitFor(async () =>
      bob.events.some((e) => e.type === 'MODIFIED' && e.name === p1 && e.description === 'changed'),
    );
    // p1 taken
    expect(await send('DELETE', `${IAM}/namespaces/${p1}/members/${users.bob}`, 'alice')).toBe(200);
    await waitFor(async () => has(bob, 'DELETED', p1));
    expect(new Set(bob.events.map((e) => e.name))).toEqual(new Set([p1, p2]));
  }, 60_000);

  it('then one with no project there is refused with a Status, and one who may watch every namespace gets kube-apiserver’s watch', async () => {
    const carol = watchProjects('carol');
    await waitFor(async () => carol.refused !== undefined);
    expect(carol.refused?.status).toBe(403);
    expect(JSON.parse(carol.refused!.body)).toMatchObject({ kind: 'Status', code: 403 });
    const root = watchProjects('root');
    await waitFor(async () => has(root, 'ADDED', p1) && has(root, 'ADDED', p2));
  }, 60_000);
});
