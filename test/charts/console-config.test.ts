import { CONSOLE_CONFIG_YAML } from '../../src/sandbox/identity-seed.js';
import { findObject, renderChart, type KubeObject } from './helm.js';

describe('chart: the console’s kapi-config ConfigMap', () => {
  let objects: KubeObject[];
  beforeAll(async () => {
    objects = await renderChart();
  });

  test('when rendered, then kapi-config holds what the sandbox seeds (clusterRole only, no secret)', () => {
    const config = findObject(objects, 'ConfigMap', 'kapi-config') as KubeObject & { data: Record<string, string> };
    expect(config.metadata.namespace).toBe('kapi-system');
    expect(config.data).toEqual({ 'kapi.yaml': CONSOLE_CONFIG_YAML });
  });

  test('when rendered, then every signed-in user may get that ConfigMap and nothing else of kapi-system', () => {
    const role = findObject(objects, 'Role', 'kapi-config-reader') as KubeObject & { rules: unknown[] };
    expect(role.rules).toEqual([
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['kapi-config'], verbs: ['get'] },
    ]);
    const binding = findObject(objects, 'RoleBinding', 'kapi-config-reader') as KubeObject & {
      subjects: unknown[];
      roleRef: { name: string };
    };
    expect(binding.roleRef.name).toBe('kapi-config-reader');
    expect(binding.subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' },
    ]);
  });
});
