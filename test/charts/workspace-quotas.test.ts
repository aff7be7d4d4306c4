import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { V1Deployment, V1Secret, V1Service } from '@kubernetes/client-node';
import { quotaWebhookConfiguration } from '../../src/workspace-quota/webhook-configuration.js';
import { startFakeKubeApi } from './fake-kube-api.js';
import { NAMESPACE, RELEASE, findObject, objectsOfKind, renderChart, setValues, type KubeObject } from './helm.js';

// The chart installs the workspace quotas' webhook kapi serves: the code's configuration, a certificate for the
// Service from a CA it trusts, kept across upgrades, and the listener's port and Secret in the Deployment.
const decode = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString('utf8');
const webhookSecret = (objects: KubeObject[]) => findObject<V1Secret>(objects, 'Secret', 'kapi-apiserver-webhook-tls');

describe('the chart’s workspace quota webhook', () => {
  let objects: KubeObject[];
  beforeAll(async () => {
    objects = await renderChart();
  });

  test('when installed, then the webhook configuration is the code’s, pointed at the webhook’s own Service', async () => {
    const [configuration] = objectsOfKind<KubeObject & { webhooks: unknown[] }>(objects, 'ValidatingWebhookConfiguration');
    const secret = webhookSecret(objects);
    const expected = quotaWebhookConfiguration(
      { service: { namespace: NAMESPACE, name: 'kapi-apiserver-webhook', port: 443 } },
      secret.data?.['ca.crt'] ?? '',
    );
    expect(configuration?.metadata.name).toBe(expected.metadata.name);
    expect(configuration?.webhooks).toEqual(expected.webhooks);
    // a ClusterIP Service of its own: never published with the users' Service (NodePort or LoadBalancer)
    const service = findObject<V1Service>(objects, 'Service', 'kapi-apiserver-webhook');
    expect(service.spec?.type).toBe('ClusterIP');
    expect(service.spec?.ports).toEqual([{ name: 'webhook', port: 443, targetPort: 'webhook', protocol: 'TCP' }]);
    const published = await renderChart(setValues({ 'service.type': 'NodePort' }));
    const users = findObject<V1Service>(published, 'Service', 'kapi-apiserver');
    expect(users.spec?.ports?.map((port) => port.name)).toEqual(['http', 'https']);
  });

  test('when installed, then the Secret’s certificate is for the Service, signed by the CA kube-apiserver is told to trust', () => {
    const secret = webhookSecret(objects);
    expect(secret.type).toBe('kubernetes.io/tls');
    const ca = new X509Certificate(decode(secret.data?.['ca.crt']));
    const certificate = new X509Certificate(decode(secret.data?.['tls.crt']));
    expect(certificate.verify(ca.publicKey)).toBe(true);
    expect(certificate.subjectAltName).toContain(`DNS:kapi-apiserver-webhook.${NAMESPACE}.svc`);
    expect(certificate.checkPrivateKey(createPrivateKey(decode(secret.data?.['tls.key'])))).toBe(true);
  });

  test('when installed, then kapi listens for it on 9444 with that Secret', () => {
    const deployment = findObject<V1Deployment>(objects, 'Deployment', 'kapi-apiserver');
    const container = deployment.spec?.template.spec?.containers[0];
    expect(container?.env).toEqual(
      expect.arrayContaining([
        { name: 'WEBHOOK_PORT', value: '9444' },
        { name: 'WEBHOOK_TLS_SECRET', value: `${NAMESPACE}/kapi-apiserver-webhook-tls` },
      ]),
    );
    expect(container?.ports).toContainEqual({ name: 'webhook', containerPort: 9444, protocol: 'TCP' });
  });

  test('when workspaceQuotas.enabled is false, then neither the webhook nor its Secret nor its port', async () => {
    const off = await renderChart(setValues({ 'workspaceQuotas.enabled': false }));
    expect(objectsOfKind(off, 'ValidatingWebhookConfiguration')).toEqual([]);
    expect(off.some((o) => o.kind === 'Secret' && o.metadata.name === 'kapi-apiserver-webhook-tls')).toBe(false);
    const env = findObject<V1Deployment>(off, 'Deployment', 'kapi-apiserver').spec?.template.spec?.containers[0]?.env;
    expect(env?.some((e) => e.name === 'WEBHOOK_PORT')).toBe(false);
  });

  describe('on upgrade', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'kapi-chart-quota-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    test('when the Secret exists, then its CA and certificate are kept (kube-apiserver keeps trusting the pods)', async () => {
      const installed = webhookSecret(objects);
      const api = await startFakeKubeApi(
        [
          {
            ...installed,
            metadata: {
              ...installed.metadata,
              name: 'kapi-apiserver-webhook-tls',
              labels: { 'app.kubernetes.io/managed-by': 'Helm' },
              annotations: { 'meta.helm.sh/release-name': RELEASE, 'meta.helm.sh/release-namespace': NAMESPACE },
            },
          } as KubeObject,
        ],
        dir,
      );
      let upgraded: KubeObject[];
      try {
        upgraded = await renderChart(['--dry-run=server', '--disable-openapi-validation', '--kubeconfig', api.kubeconfig]);
      } finally {
        await api.close();
      }
      expect(webhookSecret(upgraded).data).toEqual(installed.data);
      const [configuration] = objectsOfKind<KubeObject & { webhooks: { clientConfig: { caBundle: string } }[] }>(
        upgraded,
        'ValidatingWebhookConfiguration',
      );
      expect(configuration?.webhooks[0]?.clientConfig.caBundle).toBe(installed.data?.['ca.crt']);
    });
  });
});
