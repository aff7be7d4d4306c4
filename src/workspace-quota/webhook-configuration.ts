import { SYSTEM_WORKSPACE } from '../apis/tenant/system-workspace.js';
import { QUOTA_WEBHOOK_PATH } from './webhook-routes.js';

/** The name of the workspace quotas' ValidatingWebhookConfiguration, and of its one webhook. */
export const QUOTA_WEBHOOK_CONFIGURATION = 'kapi-apiserver-workspace-quotas';
export const QUOTA_WEBHOOK_NAME = 'resourcequotas.quota.kapi.io';

/** Where kube-apiserver reaches kapi's webhook: kapi's Service in a cluster, a URL beside it (the sandbox, tests). */
export type WebhookTarget = { url: string } | { service: { namespace: string; name: string; port: number } };

/**
 * The workspace quotas' webhook configuration (pure; the chart renders the same, test/charts checks): pod creations
 * (and resizes) in namespaces of a workspace (`kapi.io/workspace` set, system-workspace's aside) go to kapi, which
 * refuses one past its workspace's quota. failurePolicy Fail: without kapi, pods of workspaces wait rather than pass a
 * quota; namespaces outside workspaces and system-workspace's (kube-system, kapi's own) are never sent, so the cluster
 * and kapi itself still start. Side effects on dry run: none (a dry run is checked, not charged).
 */
export function quotaWebhookConfiguration(target: WebhookTarget, caBundle: string, workspaces?: readonly string[]) {
  const clientConfig =
    'url' in target
      ? { url: `${target.url}${QUOTA_WEBHOOK_PATH}`, caBundle }
      : { service: { ...target.service, path: QUOTA_WEBHOOK_PATH }, caBundle };
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: QUOTA_WEBHOOK_CONFIGURATION },
    webhooks: [
      {
        name: QUOTA_WEBHOOK_NAME,
        admissionReviewVersions: ['v1'],
        sideEffects: 'NoneOnDryRun',
        failurePolicy: 'Fail',
        timeoutSeconds: 10,
        clientConfig,
        namespaceSelector: {
          matchExpressions: workspaces
            ? [{ key: 'kapi.io/workspace', operator: 'In', values: [...workspaces] }]
            : [
                { key: 'kapi.io/workspace', operator: 'Exists' },
                // kube-system and the other system namespaces are system-workspace's: never held to kapi
                { key: 'kapi.io/workspace', operator: 'NotIn', values: [SYSTEM_WORKSPACE] },
              ],
        },
        rules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: 'Namespaced' },
          // a resize (Kubernetes 1.33 on) may take more; older clusters have no such subresource
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            operations: ['UPDATE'],
            resources: ['pods/resize'],
            scope: 'Namespaced',
          },
        ],
      },
    ],
  };
}
