/**
 * Kubernetes versions kapi supports, from a fresh cluster: the sandbox plays the oldest releases (1.26: SelfSubjectReview
 * only at v1alpha1; 1.27: v1beta1), and suites that start in parallel on a cluster without kapi's CRDs all succeed.
 * Against KUBECONFIG's cluster the forwarding case runs once, on the release the cluster is (make e2e-real runs it on
 * 1.26 and 1.32); the cases of the releases the sandbox plays are declared skipped there.
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
import { describeOnSandbox, E2E_TARGET } from './target.js';

const PASSWORD = 'e2e-Older-password-1';

/** Discovery finds SelfSubjectReview where the cluster serves it, and kapi forwards one as the user. */
async function expectSelfSubjectReviewForwarded(e2e: E2E, servedOnSandbox?: string): Promise<void> {
  const version = await selfSubjectReviewVersion(e2e.admin);
  if (servedOnSandbox) expect(version).toBe(servedOnSandbox);
  if (version === undefined) {
    throw new Error('the cluster serves no SelfSubjectReview (Kubernetes 1.26 needs the APISelfSubjectReview gate)');
  }
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
}

const PLAYED_RELEASES: [number, string][] = [
  [26, 'v1alpha1'],
  [27, 'v1beta1'],
  [35, 'v1'],
];

for (const [minor, servedVersion] of PLAYED_RELEASES) {
  describeOnSandbox('the sandbox playing that release (a real cluster is the one release it runs)')(
    `when kube-apiserver is 1.${minor}`,
    () => {
      let e2e: E2E;

      beforeAll(async () => {
        e2e = await startE2E({ kubernetesMinor: minor });
      });

      afterAll(async () => {
        await e2e?.stop();
      });

      it(`then discovery finds SelfSubjectReview at ${servedVersion}, and kapi forwards it as the user`, async () => {
        await expectSelfSubjectReviewForwarded(e2e, servedVersion);
      });

      it.each(['v1', 'v1beta1', 'v1alpha1'].filter((v) => v !== servedVersion))(
        'then SelfSubjectReview at %s, which that release does not serve, is a 404',
        async (version) => {
          const review = selfSubjectReviewRequest(version);
          const answer = await rawRequest(e2e.sandbox!.url, {
            method: 'POST',
            path: review.path,
            headers: [...bearer(e2e.sandbox!.adminToken), 'Content-Type', 'application/json'],
            body: review.body,
          });
          expect(answer.status).toBe(404);
        },
      );
    },
  );
}

if (E2E_TARGET === 'cluster') {
  describe('when kube-apiserver is the cluster’s own release', () => {
    let e2e: E2E;

    beforeAll(async () => {
      e2e = await startE2E();
    });

    afterAll(async () => {
      await e2e?.stop();
    });

    it('then discovery finds SelfSubjectReview where that release serves it, and kapi forwards it as the user', async () => {
      await expectSelfSubjectReviewForwarded(e2e);
    });
  });
}

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
