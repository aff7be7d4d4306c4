import { z } from 'zod';
import { defineOperation } from '../../../openapi/operation.js';
import { StatusSchema, apiComponent, statusResponses } from '../../../openapi/schemas.js';

/**
 * KubeSphere 3.4's `resources.kapi.io/v1alpha2` routes its console reads: the system components (cluster overview), and
 * the resource usage and abnormal workloads of a project (its overview) or of the cluster.
 */
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

export const readComponent = defineOperation({
  operationId: 'readComponent',
  method: 'get',
  path: `${RESOURCES_V1ALPHA2_BASE}/components/{component}`,
  tags: ['resources.kapi.io/v1alpha2'],
  summary: 'A system component: the Service of that name in kapi’s namespace, else kube-system, with its pods’ health',
  description:
    'As KubeSphere answers its component detail (the first system namespace with a Service of that name). Needs ' +
    '`get components` (that name) in API group `resources.kapi.io`.',
  security: 'bearer',
  pathParameters: z.object({ component: z.string().describe('The Service’s name.') }),
  responses: {
    200: { description: 'The component.', body: ComponentStatusSchema },
    403: { description: 'The cluster’s RBAC does not allow the caller to read it.', body: StatusSchema },
    404: { description: 'No system Service of that name (or one without a selector).', body: StatusSchema },
    ...statusResponses,
  },
});

const ResourceListSchema = z.record(z.string(), z.string());

export const ResourceUsageSchema = apiComponent(
  'ResourceUsage',
  z.object({
    namespace: z.string().describe('The project; empty for the cluster.'),
    data: z.object({
      hard: ResourceListSchema.optional().describe(
        'The project’s ResourceQuotas’ limits (`status.hard`), the smallest of each; absent without quotas.',
      ),
      used: ResourceListSchema.describe(
        'The quotas’ `status.used` (the smallest of each), and for each counted kind the quotas do not count ' +
          '(`count/pods`, `count/deployments.apps`, `count/statefulsets.apps`, `count/daemonsets.apps`, `count/jobs.batch`, ' +
          '`count/cronjobs.batch`, `count/services`, `count/ingresses.extensions`, `persistentvolumeclaims`) the number ' +
          'of objects in kapi’s watched caches.',
      ),
      left: ResourceListSchema.optional().describe('Per limit that has a use: what is left of it, never below 0.'),
    }),
  }),
);

export const AbnormalWorkloadsSchema = apiComponent(
  'AbnormalWorkloads',
  z.object({
    namespace: z.string().describe('The project; empty for the cluster.'),
    data: z
      .object({
        deployments: z.int().min(0),
        statefulsets: z.int().min(0),
        daemonsets: z.int().min(0),
        jobs: z.int().min(0),
        persistentvolumeclaims: z.int().min(0),
      })
      .describe(
        'How many objects of each kind are abnormal, by the listing’s `status`: workloads `updating`, jobs `failed`, ' +
          'claims `pending` or `lost`.',
      ),
  }),
);

const projectParameter = z.object({ namespace: z.string().describe('The project (namespace).') });
const usageRight = (resource: string, where: string) =>
  `Needs \`get ${resource}\` in API group \`resources.kapi.io\` ${where} (a project’s members and viewers have it).`;

export const readNamespaceQuotas = defineOperation({
  operationId: 'readNamespaceQuotas',
  method: 'get',
  path: `${RESOURCES_V1ALPHA2_BASE}/namespaces/{namespace}/quotas`,
  tags: ['resources.kapi.io/v1alpha2'],
  summary: 'A project’s resource usage: its quotas’ limits, their use, what is left, and its object counts',
  description:
    `${usageRight('quotas', 'in the namespace')} The project’s ResourceQuotas are read from kube-apiserver as the ` +
    'caller (impersonated), so the caller must also be allowed to list them; the counts come from kapi’s watched caches.',
  security: 'bearer',
  pathParameters: projectParameter,
  responses: {
    400: { description: 'The namespace in the path is not a DNS label.', body: StatusSchema },
    200: { description: 'The usage.', body: ResourceUsageSchema },
    403: {
      description: 'The caller may not get quotas here, or kube-apiserver does not let it list the ResourceQuotas.',
      body: StatusSchema,
    },
    ...statusResponses,
  },
});

export const readClusterQuotas = defineOperation({
  operationId: 'readClusterQuotas',
  method: 'get',
  path: `${RESOURCES_V1ALPHA2_BASE}/quotas`,
  tags: ['resources.kapi.io/v1alpha2'],
  summary: 'The cluster’s object counts, under the quota keys a project’s usage has',
  description: `${usageRight('quotas', 'cluster-wide')} Counted from kapi’s watched caches.`,
  security: 'bearer',
  responses: {
    200: { description: 'The counts (`used` only).', body: ResourceUsageSchema },
    403: { description: 'The caller may not get quotas cluster-wide.', body: StatusSchema },
    ...statusResponses,
  },
});

export const readNamespaceAbnormalWorkloads = defineOperation({
  operationId: 'readNamespaceAbnormalWorkloads',
  method: 'get',
  path: `${RESOURCES_V1ALPHA2_BASE}/namespaces/{namespace}/abnormalworkloads`,
  tags: ['resources.kapi.io/v1alpha2'],
  summary: 'How many of a project’s workloads, jobs and claims are abnormal',
  description: `${usageRight('abnormalworkloads', 'in the namespace')} Counted from kapi’s watched caches.`,
  security: 'bearer',
  pathParameters: projectParameter,
  responses: {
    400: { description: 'The namespace in the path is not a DNS label.', body: StatusSchema },
    200: { description: 'The counts.', body: AbnormalWorkloadsSchema },
    403: { description: 'The caller may not get abnormalworkloads here.', body: StatusSchema },
    ...statusResponses,
  },
});

export const readClusterAbnormalWorkloads = defineOperation({
  operationId: 'readClusterAbnormalWorkloads',
  method: 'get',
  path: `${RESOURCES_V1ALPHA2_BASE}/abnormalworkloads`,
  tags: ['resources.kapi.io/v1alpha2'],
  summary: 'How many of the cluster’s workloads, jobs and claims are abnormal',
  description: `${usageRight('abnormalworkloads', 'cluster-wide')} Counted from kapi’s watched caches.`,
  security: 'bearer',
  responses: {
    200: { description: 'The counts.', body: AbnormalWorkloadsSchema },
    403: { description: 'The caller may not get abnormalworkloads cluster-wide.', body: StatusSchema },
    ...statusResponses,
  },
});

export const readUserKubeconfig = defineOperation({
  operationId: 'readUserKubeconfig',
  method: 'get',
  path: `${RESOURCES_V1ALPHA2_BASE}/users/{user}/kubeconfig`,
  tags: ['resources.kapi.io/v1alpha2'],
  summary: 'A kubeconfig for a user, reaching the cluster through kapi (the console’s Toolbox → kubeconfig)',
  description:
    'YAML, as KubeSphere answers it: a context on kapi’s HTTPS address (`--issuer-url` when set, else the host the ' +
    'request named, on kapi’s HTTPS port) with kapi’s generated CA, whose user is the `kubectl-kapi` credential ' +
    'plugin: kubectl asks the user to sign in (password, or the browser for a user of an identity provider) the ' +
    'first time, then keeps the token fresh. It carries no credential. Anyone reads their own; another’s needs ' +
    '`get users/kubeconfig` (that name) in API group `resources.kapi.io`.',
  security: 'bearer',
  pathParameters: z.object({ user: z.string().describe('The user’s name.') }),
  responses: {
    200: {
      description: 'The kubeconfig.',
      contentType: 'text/plain',
      body: apiComponent('UserKubeconfig', z.string().describe('A kubeconfig (YAML).')),
    },
    403: { description: 'Another user’s, and the caller may not read it.', body: StatusSchema },
    404: {
      description: 'No such user, or kapi serves no HTTPS (kubectl sends no token over HTTP).',
      body: StatusSchema,
    },
    ...statusResponses,
  },
});

export const readUserKubectl = defineOperation({
  operationId: 'readUserKubectl',
  method: 'get',
  path: `${RESOURCES_V1ALPHA2_BASE}/users/{user}/kubectl`,
  tags: ['resources.kapi.io/v1alpha2'],
  summary: 'The signed-in user’s kubectl pod (the console’s Toolbox → kubectl)',
  description:
    'KubeSphere’s answer (`namespace`, `pod`, `container`), made safe: the user’s own pod in kapi’s namespace, made ' +
    'on the first call (owned by the User, so deleting the user deletes it) and waited for until it runs. It holds ' +
    'no credential and runs unprivileged: when the console opens its terminal, kapi hands the user’s own token to ' +
    'the shell on stdin (never echoed), and kubectl reaches the cluster through kapi as the user. Only the user ' +
    'themself, with `get users/kubectl` (their name) in API group `resources.kapi.io` (platform admins have it, as ' +
    'the console shows the tool to them). 404 when kapi serves no toolbox (`--kubectl-image`).',
  security: 'bearer',
  pathParameters: z.object({ user: z.string().describe('The user’s name: the caller’s.') }),
  responses: {
    200: {
      description: 'The pod, running.',
      body: apiComponent(
        'KubectlPod',
        z.object({
          namespace: z.string().describe('kapi’s namespace.'),
          pod: z.string().describe('The user’s kubectl pod.'),
          container: z.string().describe('`kubectl`.'),
        }),
      ),
    },
    403: { description: 'Another user’s, or the caller may not use the toolbox.', body: StatusSchema },
    404: { description: 'No such user, or kapi serves no kubectl toolbox.', body: StatusSchema },
    409: {
      description: 'A pod of the pod’s name that kapi did not make is in kapi’s namespace: kapi leaves it alone.',
      body: StatusSchema,
    },
    ...statusResponses,
  },
});

export const componentOperations = [
  listComponents,
  readComponent,
  readUserKubeconfig,
  readUserKubectl,
  readClusterQuotas,
  readNamespaceQuotas,
  readClusterAbnormalWorkloads,
  readNamespaceAbnormalWorkloads,
] as const;
