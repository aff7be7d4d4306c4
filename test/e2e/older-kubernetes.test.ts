/**
 * Kubernetes versions kapi supports, from a fresh cluster: the sandbox plays the oldest releases (1.26: SelfSubjectReview
 * only at v1alpha1; 1.27: v1beta1), and suites that start in parallel on a cluster without kapi's CRDs all succeed.
 * Against KUBECONFIG's cluster the same cases run on whatever release it is.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../../src/kube/client.js';
import { connectionFor, tokenAccess } from '../../src/kube/connection.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { login } from './client.js';
import { selfSubjectReviewRequest, selfSubjectReviewVersion } from './discovery.js';
import { bearer, rawRequest } from './forwarding-http.js';
import { ensureCrds, silentLogger, startE2E, type E2E } from './harness.js';

const PASSWORD = 'e2e-Older-password-1';

describe.each([
  [26, 'v1alpha1'],
  [27, 'v1beta1'],
  [35, 'v1'],
])('when kube-apiserver is 1.%d', (minor, servedVersion) => {
  let e2e: E2E;

  beforeAll(async () => {
    e2e = await startE2E({ kubernetesMinor: minor });
  });

  afterAll(async () => {
    await e2e?.stop();
  });

  it(`then discovery finds SelfSubjectReview where that release serves it (${servedVersion} on the sandbox), and kapi forwards it as the user`, async () => {
    const version = await selfSubjectReviewVersion(e2e.admin);
    if (e2e.sandbox) expect(version).toBe(servedVersion);
    if (version === undefined) throw new Error('the cluster serves no SelfSubjectReview');
    const user = await e2e.createUser('whoami', PASSWORD, { groups: ['e2e-older'] });
    const { access_token } = await login(e2e.kapiUrl, user, PASSWORD);
    const review = selfSubjectReviewRequest(version);
    const answer = await rawRequest(e2e.kapiUrl, {
      method: 'POST',
      path: review.path,
      headers: [...bearer(access_token), 'Content-Type', 'application/json'],
      body: review.body,
    });
    expect(answer.status).toBe(201);
    const body = JSON.parse(answer.body) as {
      apiVersion: string;
      status: { userInfo: { username: string; groups: string[] } };
    };
    expect(body.apiVersion).toBe(`authentication.k8s.io/${version}`);
    expect(body.status.userInfo.username).toBe(user);
    expect(body.status.userInfo.groups).toContain('e2e-older');
  });

  it.each(['v1', 'v1beta1', 'v1alpha1'].filter((v) => v !== servedVersion))(
    'then SelfSubjectReview at %s, which that release does not serve, is a 404',
    async (version) => {
      if (!e2e.sandbox) return; // a real cluster may serve several versions at once
      const review = selfSubjectReviewRequest(version);
      const answer = await rawRequest(e2e.sandbox.url, {
        method: 'POST',
        path: review.path,
        headers: [...bearer(e2e.sandbox.adminToken), 'Content-Type', 'application/json'],
        body: review.body,
      });
      expect(answer.status).toBe(404);
    },
  );
});

describe('when the suites start in parallel on a cluster without kapi’s CRDs', () => {
  it('then each one’s creation succeeds: the CRD another created first (409 AlreadyExists) is as good', async () => {
    const sandbox = await startSandbox({ logger: silentLogger, crdDir: mkdtempSync(join(tmpdir(), 'no-crds-')) });
    const admin = new KubeClient(connectionFor(tokenAccess(sandbox.url, sandbox.adminToken), 'sandbox'));
    try {
      await expect(Promise.all([ensureCrds(admin), ensureCrds(admin), ensureCrds(admin)])).resolves.toBeDefined();
      const crds = await admin.request<{ items: { metadata: { name: string } }[] }>({
        path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      });
      expect(crds.items.map((crd) => crd.metadata.name)).toEqual(
        expect.arrayContaining(['clusterconfigurations.installer.kapi.io', 'users.iam.kapi.io']),
      );
    } finally {
      await sandbox.stop();
    }
  });
});
