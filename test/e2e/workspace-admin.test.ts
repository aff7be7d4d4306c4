/**
 * Workspaces administered through kapi (SPEC §18), on the sandbox and on real kube-apiservers: created with a manager
 * (naming another needs the right to), edited with the console's JSON patch, deleted keeping their namespaces (out of
 * the workspace) unless the caller asks for them to go; each refusal a Kubernetes Status.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bindGlobalRole, deleteIgnoringMissing, startE2E, waitFor, type E2E } from './harness.js';
import { KapiCaller } from './identity-http.js';
import { assertTarget } from './target.js';

const PASSWORD = 'e2e-Workspace-Passw0rd';
const TENANT = '/kapis/tenant.kapi.io/v1alpha3';
const TEMPLATES = '/apis/tenant.kapi.io/v1alpha2/workspacetemplates';
let e2e: E2E;
let adminToken: string;
let provisioner: string;
let provisionerToken: string;
let alice: string;
let aliceToken: string;
const made: string[] = [];
const caller = new KapiCaller();

async function send(method: string, path: string, token: string, body?: unknown, contentType = 'application/json') {
  const res = await fetch(`${e2e.kapiUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': contentType }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as any };
}

const workspace = (name: string, manager?: string) => ({
  apiVersion: 'tenant.kapi.io/v1alpha2',
  kind: 'WorkspaceTemplate',
  metadata: { name, annotations: { 'kapi.io/description': 'e2e' } },
  spec: { template: { spec: manager ? { manager } : {} } },
});

async function namespaceLabels(name: string): Promise<Record<string, string> | undefined> {
  const ns = await e2e.admin
    .request<{ metadata: { labels?: Record<string, string>; deletionTimestamp?: string } }>({
      path: `/api/v1/namespaces/${name}`,
    })
    .catch(() => undefined);
  // gone, or going (where no namespace controller finishes a deletion, it stays terminating)
  if (!ns || ns.metadata.deletionTimestamp) return undefined;
  return ns.metadata.labels ?? {};
}

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  const administrator = await e2e.createUser('ws-admin', PASSWORD);
  made.push(await bindGlobalRole(e2e.admin, administrator, 'platform-admin'));
  provisioner = await e2e.createUser('ws-provisioner', PASSWORD);
  made.push(await bindGlobalRole(e2e.admin, provisioner, 'platform-self-provisioner'));
  alice = await e2e.createUser('alice', PASSWORD);
  // both roles in effect at kube-apiserver (realized by kapi's controller) before any request
  await waitFor(async () => {
    const review = async (user: string, verb: string, resource: string, group: string) =>
      (
        await e2e.admin.request<{ status: { allowed?: boolean } }>({
          method: 'POST',
          path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
          body: { spec: { user, groups: ['system:authenticated'], resourceAttributes: { verb, resource, group } } },
        })
      ).status.allowed === true;
    return (
      (await review(administrator, 'delete', 'namespaces', '')) &&
      (await review(provisioner, 'create', 'workspacetemplates', 'tenant.kapi.io'))
    );
  });
  adminToken = (await caller.login(e2e.kapiUrl, administrator, PASSWORD)).access_token;
  provisionerToken = (await caller.login(e2e.kapiUrl, provisioner, PASSWORD)).access_token;
  aliceToken = (await caller.login(e2e.kapiUrl, alice, PASSWORD)).access_token;
  // a manager must be a user kapi's watch has seen
  await waitFor(
    async () => (await send('GET', `/kapis/iam.kapi.io/v1alpha2/users/${alice}`, adminToken)).status === 200,
  );
}, 90_000);

afterAll(async () => {
  for (const suffix of ['ws-a', 'ws-b', 'ws-own'])
    await deleteIgnoringMissing(e2e.admin, `${TEMPLATES}/${e2e.name(suffix)}`);
  for (const path of made) await deleteIgnoringMissing(e2e.admin, path);
  await e2e?.stop();
});

describe('workspaces administered through kapi', () => {
  it('when the administrator creates ws-a with manager alice, then 201, and alice’s workspace list holds it', async () => {
    const name = e2e.name('ws-a');
    const created = await send('POST', `${TENANT}/workspacetemplates`, adminToken, workspace(name, alice));
    expect(created.status).toBe(201);
    expect(created.body.spec.template.spec.manager).toBe(alice);
    await waitFor(async () => {
      const listed = await send('GET', `${TENANT}/workspacetemplates`, aliceToken);
      return listed.body.items.some((item: { metadata: { name: string } }) => item.metadata.name === name);
    });
    expect((await send('POST', `${TENANT}/workspacetemplates`, adminToken, workspace(name, alice))).status).toBe(409);
  });

  it('when a self-provisioner creates a workspace, then it manages it; naming alice as manager needs the right to (403)', async () => {
    const own = await send('POST', `${TENANT}/workspacetemplates`, provisionerToken, workspace(e2e.name('ws-own')));
    expect(own.status).toBe(201);
    expect(own.body.spec.template.spec.manager).toBe(provisioner);
    const given = await send(
      'POST',
      `${TENANT}/workspacetemplates`,
      provisionerToken,
      workspace(e2e.name('ws-b'), alice),
    );
    expect(given.status).toBe(403);
    expect(given.body).toMatchObject({ kind: 'Status', code: 403 });
    expect((await send('POST', `${TENANT}/workspacetemplates`, aliceToken, workspace(e2e.name('ws-b')))).status).toBe(
      403,
    );
  });

  it.each([
    ['the manager is no user', () => workspace(e2e.name('ws-b'), e2e.name('nobody')), 404],
    ['the name is no label value', () => workspace('ws.with.dots'), 400],
  ])('when %s, then creating is refused with a Status', async (_case, body, code) => {
    const refused = await send('POST', `${TENANT}/workspacetemplates`, adminToken, body());
    expect(refused.status).toBe(code);
    expect(refused.body).toMatchObject({ kind: 'Status', code });
  });

  it('when the console’s JSON patch changes ws-a’s description and manager, then 200 and both changed', async () => {
    const name = e2e.name('ws-a');
    const patched = await send(
      'PATCH',
      `${TENANT}/workspacetemplates/${name}`,
      adminToken,
      [
        { op: 'add', path: '/metadata/annotations', value: { 'kapi.io/description': 'changed' } },
        { op: 'add', path: '/spec', value: { template: { spec: { manager: provisioner } } } },
      ],
      'application/merge-patch+json',
    );
    expect(patched.status).toBe(200);
    expect(patched.body.metadata.annotations['kapi.io/description']).toBe('changed');
    expect(patched.body.spec.template.spec.manager).toBe(provisioner);
    expect((await send('PATCH', `${TENANT}/workspacetemplates/${e2e.name('ws-none')}`, adminToken, {})).status).toBe(
      404,
    );
  });

  it('when ws-a is deleted, then its project stays, out of the workspace; asked with Background, a project goes with its workspace', async () => {
    const kept = await e2e.createNamespace('ws-a-dev');
    const name = e2e.name('ws-a');
    await e2e.admin.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${kept}`,
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { 'kapi.io/workspace': name } } },
    });
    // alice managed ws-a until the patch above: once kapi's controller has taken her admin rights away, she is refused
    await waitFor(async () => {
      const review = await e2e.admin.request<{ status: { allowed?: boolean } }>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: {
          spec: {
            user: alice,
            groups: ['system:authenticated'],
            resourceAttributes: { verb: 'delete', group: 'tenant.kapi.io', resource: 'workspacetemplates', name },
          },
        },
      });
      return review.status.allowed !== true;
    });
    expect((await send('DELETE', `${TENANT}/workspacetemplates/${name}`, aliceToken)).status).toBe(403);
    const deleted = await send('DELETE', `${TENANT}/workspacetemplates/${name}`, adminToken);
    expect(deleted.body).toMatchObject({ kind: 'Status', status: 'Success' });
    const keptLabels = await namespaceLabels(kept);
    expect(keptLabels).toBeDefined();
    expect(keptLabels).not.toHaveProperty('kapi.io/workspace');
    expect((await send('DELETE', `${TENANT}/workspacetemplates/${name}`, adminToken)).status).toBe(404);

    const other = e2e.name('ws-b');
    expect((await send('POST', `${TENANT}/workspacetemplates`, adminToken, workspace(other))).status).toBe(201);
    const gone = await e2e.createNamespace('ws-b-dev');
    await e2e.admin.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${gone}`,
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { 'kapi.io/workspace': other } } },
    });
    const withProjects = await send('DELETE', `${TENANT}/workspacetemplates/${other}`, adminToken, {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      propagationPolicy: 'Background',
    });
    expect(withProjects.status).toBe(200);
    expect(await namespaceLabels(gone)).toBeUndefined();
  });
});
