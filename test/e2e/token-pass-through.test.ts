/**
 * Token pass-through (SPEC §5) on a real kube-apiserver started with kapi's `--oidc-*` flags (make e2e-real does:
 * `--oidc-issuer-url` naming a kapi at KAPI_E2E_ISSUER_URL, whose serving certificate and RSA signing key it made in
 * KAPI_E2E_ISSUER_DIR). This test starts that kapi; it finds out by itself that kube-apiserver accepts its tokens,
 * then forwards the caller's own token: kube-apiserver authenticates the user natively (no Impersonate-Uid, so
 * `auth whoami` shows no uid, where an impersonated request shows the User's). A session ended at kapi is refused by
 * kapi before anything is forwarded, though kube-apiserver alone would still take the token until it expires.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { connectToCluster } from '../../src/kube/cluster-source.js';
import { KubeClient } from '../../src/kube/client.js';
import { connectionFor, tokenAccess, type KubeConnection } from '../../src/kube/connection.js';
import { createLogger } from '../../src/observability/logger.js';
import { startKapiServer, type KapiServer } from '../../src/server/server.js';
import { login } from './client.js';
import { Kubectl } from './forwarding-kubectl.js';
import { kubeAllows, startE2E, waitFor, type E2E } from './harness.js';

const ISSUER = process.env.KAPI_E2E_ISSUER_URL;
const DIR = process.env.KAPI_E2E_ISSUER_DIR;
const PASSWORD = 'e2e-Pass-through-1';
const GROUP = 'e2e-passers';

interface WhoAmI {
  status: { userInfo: { username: string; uid?: string; groups?: string[] } };
}

const SUITE = 'token pass-through to a kube-apiserver that trusts kapi as an OpenID issuer (e2e)';
(ISSUER && DIR ? describe : describe.skip)(
  ISSUER && DIR
    ? SUITE
    : `${SUITE} [skipped: needs a kube-apiserver started with --oidc-* flags naming kapi (make e2e-real sets KAPI_E2E_ISSUER_URL)]`,
  () => {
    let e2e: E2E;
    let connection: KubeConnection;
    let issuerKapi: KapiServer;
    let user: string;
    let caDir: string;
    const lines: string[] = [];
    const kapiUrl = () => `http://127.0.0.1:${issuerKapi.httpPort}`;

    beforeAll(async () => {
      e2e = await startE2E();
      // kapi's signing keys: the RSA key kube-apiserver will find in kapi's JWKS, active
      const keys = `${e2e.runId}-issuer-keys`;
      await e2e.admin.request({
        method: 'POST',
        path: `/api/v1/namespaces/${e2e.runId}/secrets`,
        body: {
          metadata: { name: keys },
          data: {
            'rs.pem': readFileSync(join(DIR!, 'signing.pem')).toString('base64'),
            active: Buffer.from('rs').toString('base64'),
          },
        },
      });
      connection = await connectToCluster('kubeconfig', process.env.KUBECONFIG);
      caDir = mkdtempSync(join(tmpdir(), 'kapi-e2e-issuer-'));
      issuerKapi = await startKapiServer({
        options: {
          port: 0,
          tlsPort: Number(new URL(ISSUER!).port),
          metricsPort: undefined,
          bindAddress: '127.0.0.1',
          configuration: e2e.configuration,
          signingKeySecret: { namespace: e2e.runId, name: keys },
          issuerUrl: ISSUER,
          tlsCertFile: join(DIR!, 'tls.crt'),
          tlsKeyFile: join(DIR!, 'tls.key'),
          tlsSecret: undefined,
          tlsCaOut: join(caDir, 'ca.crt'),
          trustedProxies: [],
          // asked again twice a second, not every minute: kube-apiserver fetches kapi's discovery on its own schedule
          tokenReviewIntervalMs: 500,
        },
        connection,
        logger: createLogger('info', { sink: (line) => lines.push(line) }),
        allowGeneratedSigningKey: false,
      });
      await issuerKapi.ready(30_000);
      // a User's groups go into its tokens only while the tenant guard holds them (SPEC §18): this kapi, a user of
      // its own to kube-apiserver, has exempted itself first
      await waitFor(() => lines.some((line) => JSON.parse(line).message.startsWith('tenant guard in place')));
      user = await e2e.createUser('passer', PASSWORD, { groups: [GROUP] });
      await e2e.grant(user, [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] }]);
    });

    afterAll(async () => {
      await issuerKapi?.stop(1_000);
      connection?.close();
      await e2e?.stop();
      if (caDir) rmSync(caDir, { recursive: true, force: true });
    });

    const passThroughOn = () => lines.some((line) => JSON.parse(line).message === 'token pass-through on');
    const reviewAtKube = (token: string) =>
      new KubeClient(connection).request<{ status: { authenticated?: boolean; user?: { username: string } } }>({
        method: 'POST',
        path: '/apis/authentication.k8s.io/v1/tokenreviews',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      });

    it('then kapi finds out kube-apiserver accepts its tokens, and kubectl through kapi is the user as kube-apiserver itself authenticates it', async () => {
      const { access_token: token } = await login(kapiUrl(), user, PASSWORD);
      // every request before the verdict is impersonated; the verdict comes from a TokenReview of this token
      await waitFor(async () => {
        const res = await fetch(`${kapiUrl()}/api/v1/nodes?limit=1`, { headers: { Authorization: `Bearer ${token}` } });
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        return passThroughOn();
      });
      expect((await reviewAtKube(token)).status).toMatchObject({ authenticated: true, user: { username: user } });

      const kubectl = Kubectl.create(`https://127.0.0.1:${issuerKapi.httpsPort}`, join(DIR!, 'ca.crt'));
      try {
        const whoami = await kubectl.run(['auth', 'whoami', '-o', 'json'], token);
        expect(whoami).toMatchObject({ code: 0, stderr: '' });
        const passed = (JSON.parse(whoami.stdout) as WhoAmI).status.userInfo;
        expect(passed.username).toBe(user);
        expect(passed.groups).toEqual(expect.arrayContaining([GROUP, 'system:authenticated']));
        // authenticated from its token: no uid (kapi's impersonation sends the User's as Impersonate-Uid)
        expect(passed.uid).toBeUndefined();
        const nodes = await kubectl.run(['get', 'nodes', '-o', 'name'], token);
        expect(nodes.code).toBe(0);

        // the same user through the suite's own kapi (HS256 tokens, no issuer URL): impersonated, with its uid
        const impersonated = Kubectl.create(e2e.kapiHttpsUrl, e2e.caFile);
        try {
          const other = await login(e2e.kapiUrl, user, PASSWORD);
          const run = await impersonated.run(['auth', 'whoami', '-o', 'json'], other.access_token);
          expect(run).toMatchObject({ code: 0, stderr: '' });
          const info = (JSON.parse(run.stdout) as WhoAmI).status.userInfo;
          expect(info.username).toBe(user);
          expect(info.uid).toEqual(expect.any(String));
        } finally {
          impersonated.cleanup();
        }
      } finally {
        kubectl.cleanup();
      }
      expect(lines.join('\n')).not.toContain(token);
    }, 60_000);

    it('then the tenant guard holds for a kapi token sent straight to kube-apiserver: a project admin may not relabel or name a creator', async () => {
      // the user administers a namespace of its own, which sits in a workspace it has no right in
      const namespace = await e2e.createNamespace('passer-project');
      const admin = new KubeClient(connection);
      await e2e.asKapi.request({
        method: 'PATCH',
        path: `/api/v1/namespaces/${namespace}`,
        contentType: 'application/merge-patch+json',
        body: { metadata: { labels: { 'kapi.io/workspace': e2e.name('passers-ws') } } },
      });
      // everything in the namespace, the Namespace object included (a bare kit aggregates no `admin` ClusterRole)
      await admin.request({
        method: 'POST',
        path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`,
        body: { metadata: { name: 'passer-admin' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
      });
      await admin.request({
        method: 'POST',
        path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`,
        body: {
          metadata: { name: 'passer-admin' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'passer-admin' },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
        },
      });
      await waitFor(() =>
        kubeAllows(e2e.admin, user, { verb: 'patch', resource: 'namespaces', name: namespace, namespace }),
      );
      const { access_token: token } = await login(kapiUrl(), user, PASSWORD);
      // the user's own client of kube-apiserver: its kapi token, and the kit's CA as the kubeconfig names it
      const kubeconfig = parse(readFileSync(process.env.KUBECONFIG as string, 'utf8')) as {
        clusters: { cluster: { 'certificate-authority': string } }[];
      };
      const ca = readFileSync(kubeconfig.clusters[0]!.cluster['certificate-authority']);
      const userConnection = connectionFor({ ...tokenAccess(connection.server.origin, token), ca }, 'kubeconfig');
      const patch = (body: unknown) =>
        new KubeClient(userConnection)
          .request({
            method: 'PATCH',
            path: `/api/v1/namespaces/${namespace}`,
            contentType: 'application/merge-patch+json',
            body,
          })
          .then(
            () => 200,
            (error: { code?: number; message?: string }) => `${error.code} ${error.message}`,
          );
      // the token is the user's own at kube-apiserver (no impersonation): RBAC lets it edit its namespace...
      expect(await patch({ metadata: { labels: { team: 'passers' } } })).toBe(200);
      // ...but not the fields kapi's grants follow
      expect(await patch({ metadata: { labels: { 'kapi.io/workspace': e2e.name('elsewhere') } } })).toMatch(
        /^403 .*project-/,
      );
      expect(await patch({ metadata: { annotations: { 'tenant.kapi.io/creator-pending': user } } })).toMatch(
        /^403 .*project-creator/,
      );
      userConnection.close();
    });

    it('then a session ended at kapi is refused by kapi before forwarding, though kube-apiserver would still take the token', async () => {
      const { access_token: token } = await login(kapiUrl(), user, PASSWORD);
      const logout = await fetch(`${kapiUrl()}/oauth/logout`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(logout.status).toBe(200);
      const refused = await fetch(`${kapiUrl()}/api/v1/nodes`, { headers: { Authorization: `Bearer ${token}` } });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ kind: 'Status', code: 401 });
      // a JWT is valid until it expires: kube-apiserver alone still authenticates it, so the refusal was kapi's
      expect((await reviewAtKube(token)).status).toMatchObject({ authenticated: true, user: { username: user } });
    });
  },
);
