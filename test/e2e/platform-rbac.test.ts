/**
 * The platform's roles are Kubernetes RBAC (SPEC §17's one authorizer), on the sandbox and on real kube-apiservers:
 * a GlobalRoleBinding gives its user, through kapi and straight at kube-apiserver alike, what its GlobalRole's rules
 * say, because kapi's elected controller realizes the role as a ClusterRole and the binding as a ClusterRoleBinding;
 * a removed binding takes the rights away; a realized object deleted or changed by hand is put back. Each step is
 * proved by the order of events (the cluster's own SubjectAccessReview), never by a time.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bindGlobalRole, deleteIgnoringMissing, kubeAllows, startE2E, waitFor, type E2E } from './harness.js';
import { KapiCaller } from './identity-http.js';
import { assertTarget } from './target.js';

const PASSWORD = 'e2e-Rbac-Passw0rd';
const IAM = '/apis/iam.kapi.io/v1alpha2';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
let e2e: E2E;
let user: string;
let token: string;
let roleName: string;
let bindingName: string;
const caller = new KapiCaller();

/** What kube-apiserver itself decides for the user (a SubjectAccessReview by the cluster's administrator). */
function allowedAtKube(verb: string, resource: string): Promise<boolean> {
  return kubeAllows(e2e.admin, user, { verb, group: '', resource });
}

/** The same question through kapi, as the user: kapi forwards /api impersonating it. */
async function kapiAnswers(path: string): Promise<number> {
  return (await caller.get(`${e2e.kapiUrl}${path}`, token)).status;
}

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  user = await e2e.createUser('rbac-user', PASSWORD);
  token = (await caller.login(e2e.kapiUrl, user, PASSWORD)).access_token;
  roleName = `${e2e.runId}-namespace-reader`;
  bindingName = `${user}-${roleName}`;
  await e2e.admin.request({
    method: 'POST',
    path: `${IAM}/globalroles`,
    body: {
      apiVersion: 'iam.kapi.io/v1alpha2',
      kind: 'GlobalRole',
      metadata: { name: roleName },
      rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list'] }],
    },
  });
}, 60_000);

afterAll(async () => {
  await deleteIgnoringMissing(e2e.admin, `${IAM}/globalrolebindings/${bindingName}`);
  await deleteIgnoringMissing(e2e.admin, `${IAM}/globalroles/${roleName}`);
  await e2e?.stop();
});

describe('platform roles realized in RBAC', () => {
  it('then a GlobalRoleBinding gives its user the role’s rules at kube-apiserver and through kapi alike', async () => {
    expect(await allowedAtKube('list', 'namespaces')).toBe(false);
    expect(await kapiAnswers('/api/v1/namespaces')).toBe(403);
    await bindGlobalRole(e2e.admin, user, roleName);
    const realizedMs = await waitFor(() => allowedAtKube('list', 'namespaces'));
    // a figure for the record (the closing note), never a bound
    console.log(
      `platform-rbac (${e2e.target}): a new GlobalRoleBinding in effect at kube-apiserver after ${realizedMs} ms`,
    );
    expect(await kapiAnswers('/api/v1/namespaces')).toBe(200);
    // only what the role holds
    expect(await allowedAtKube('delete', 'namespaces')).toBe(false);
    expect(await kapiAnswers('/api/v1/nodes')).toBe(403);
    const realized = await e2e.admin.request<{
      metadata: { labels: Record<string, string>; ownerReferences: { kind: string; name: string }[] };
      roleRef: { name: string };
    }>({ path: `${RBAC}/clusterrolebindings/kapi:globalrolebinding:${bindingName}` });
    expect(realized.roleRef.name).toBe(`kapi:globalrole:${roleName}`);
    expect(realized.metadata.labels).toMatchObject({ 'iam.kapi.io/realizes': 'globalrolebinding' });
    expect(realized.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'GlobalRoleBinding', name: bindingName }),
    ]);
  }, 60_000);

  it('then a realized binding deleted by hand comes back, and a realized role edited by hand is put back', async () => {
    await e2e.admin.request({
      method: 'DELETE',
      path: `${RBAC}/clusterrolebindings/kapi:globalrolebinding:${bindingName}`,
    });
    await waitFor(async () => {
      try {
        await e2e.admin.request({ path: `${RBAC}/clusterrolebindings/kapi:globalrolebinding:${bindingName}` });
        return true;
      } catch {
        return false;
      }
    });
    const path = `${RBAC}/clusterroles/kapi:globalrole:${roleName}`;
    const role = await e2e.admin.request<Record<string, unknown>>({ path });
    await e2e.admin.request({
      method: 'PUT',
      path,
      body: { ...role, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
    });
    await waitFor(async () => {
      const now = await e2e.admin.request<{ rules: { verbs: string[] }[] }>({ path });
      return now.rules.length === 1 && now.rules[0]!.verbs.join() === 'get,list';
    });
    // kube-apiserver's authorizer reads roles from its own watch cache, a moment behind the object just read
    // back (1.26 answered one SubjectAccessReview from the widened role in CI): wait for it to catch up.
    await waitFor(async () => !(await allowedAtKube('delete', 'namespaces')));
    expect(await allowedAtKube('list', 'namespaces')).toBe(true);
  }, 60_000);

  it('then removing the GlobalRoleBinding takes the rights away, at kube-apiserver and through kapi', async () => {
    await e2e.admin.request({ method: 'DELETE', path: `${IAM}/globalrolebindings/${bindingName}` });
    const revokedMs = await waitFor(async () => !(await allowedAtKube('list', 'namespaces')));
    console.log(`platform-rbac (${e2e.target}): a removed GlobalRoleBinding out of effect after ${revokedMs} ms`);
    expect(await kapiAnswers('/api/v1/namespaces')).toBe(403);
  }, 60_000);
});
