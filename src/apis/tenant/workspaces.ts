// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export { WORKSPACE_LABEL } from '../../kube/namespace-cache.js';

/**
 * The `Workspace` (tenant.kapi.io/v1alpha1) of a WorkspaceTemplate, as KubeSphere 3.4's controller makes it for a
 * single cluster and its v1alpha3 `workspaces` list answers it (pure): the template's name, its template's labels and
 * spec. kapi derives it per answer instead of keeping a second object in step.
 */
export function workspaceOf(template: Raw): Raw {
  const metadata = template?.metadata ?? {};
  const inner = template?.spec?.template ?? {};
  const labels = inner.metadata?.labels;
  return {
    apiVersion: 'tenant.kapi.io/v1alpha1',
    kind: 'Workspace',
    metadata: {
      name: metadata.name,
      ...(metadata.uid && { uid: metadata.uid }),
      ...(metadata.resourceVersion && { resourceVersion: metadata.resourceVersion }),
      ...(metadata.creationTimestamp && { creationTimestamp: metadata.creationTimestamp }),
      ...(labels && typeof labels === 'object' && { labels }),
      ...(metadata.annotations && { annotations: metadata.annotations }),
    },
    spec: inner.spec ?? {},
    status: {},
  };
}
