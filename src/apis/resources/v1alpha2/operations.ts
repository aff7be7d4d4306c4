import { z } from 'zod';
import { defineOperation } from '../../../openapi/operation.js';
import { StatusSchema, apiComponent, statusResponses } from '../../../openapi/schemas.js';

/** KubeSphere 3.4's `resources.kapi.io/v1alpha2` routes its console reads: the system components (cluster overview). */
export const RESOURCES_V1ALPHA2_BASE = '/kapis/resources.kapi.io/v1alpha2';

export const ComponentStatusSchema = apiComponent(
  'ComponentStatus',
  z.object({
    name: z.string().describe('The Service’s name.'),
    namespace: z.string(),
    selfLink: z.string().describe('Always empty (KubeSphere’s field, long unused).'),
    label: z.record(z.string(), z.string()).describe('The Service’s selector.'),
    startedAt: z.string().describe('The Service’s creation time.'),
    totalBackends: z.int().min(0).describe('Pods the Service selects.'),
    healthyBackends: z.int().min(0).describe('Of those, the ones running with every container ready.'),
  }),
);

export const listComponents = defineOperation({
  operationId: 'listComponents',
  method: 'get',
  path: `${RESOURCES_V1ALPHA2_BASE}/components`,
  tags: ['resources.kapi.io/v1alpha2'],
  summary:
    'The system components: each Service with a selector in kapi’s namespace and kube-system, with its pods’ health',
  description:
    'A bare array, as KubeSphere answers it. Served from the watched Services and pods. Needs `list components` in ' +
    'API group `resources.kapi.io`.',
  security: 'bearer',
  responses: {
    200: { description: 'The components.', body: z.array(ComponentStatusSchema) },
    403: { description: 'The cluster’s RBAC does not allow the caller to list components.', body: StatusSchema },
    ...statusResponses,
  },
});

export const componentOperations = [listComponents] as const;
