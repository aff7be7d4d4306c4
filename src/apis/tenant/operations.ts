import { z } from 'zod';
import { defineOperation } from '../../openapi/operation.js';
import { StatusSchema, apiComponent, statusResponses } from '../../openapi/schemas.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../resources/v1alpha3/kinds/kind-table.js';
import { schemaOf } from '../resources/v1alpha3/listing/listing-query.js';

/**
 * The workspace reads of tenant.kapi.io that KubeSphere 3.4's console makes at every page load and on its workspace
 * pages (SPEC §18): lists filtered per caller, at the v1alpha3 and v1alpha2 routes it chooses between by version.
 */
export const TENANT_V1ALPHA2_BASE = '/kapis/tenant.kapi.io/v1alpha2';
export const TENANT_V1ALPHA3_BASE = '/kapis/tenant.kapi.io/v1alpha3';

const templates = KINDS_BY_RESOURCE.get('workspacetemplates') as KindDefinition;

const metadataSchema = z.looseObject({
  name: z.string(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

export const WorkspaceTemplateSchema = apiComponent(
  'WorkspaceTemplateObject',
  z
    .looseObject({
      apiVersion: z.literal('tenant.kapi.io/v1alpha2'),
      kind: z.literal('WorkspaceTemplate'),
      metadata: metadataSchema,
      spec: z.looseObject({
        template: z.looseObject({ spec: z.looseObject({ manager: z.string().optional() }).optional() }).optional(),
      }),
    })
    .describe('A workspace as stored.'),
);

export const WorkspaceSchema = apiComponent(
  'Workspace',
  z
    .looseObject({
      apiVersion: z.literal('tenant.kapi.io/v1alpha1'),
      kind: z.literal('Workspace'),
      metadata: metadataSchema,
      spec: z.looseObject({ manager: z.string().optional(), networkIsolation: z.boolean().optional() }),
    })
    .describe('KubeSphere 3.4’s Workspace of a WorkspaceTemplate: its name, its template’s labels and spec.'),
);

const page = (item: z.ZodType, id: string) =>
  apiComponent(
    id,
    z.object({ items: z.array(item), totalItems: z.int().min(0).describe('Matching workspaces, over all pages.') }),
  );

const perCaller =
  'Filtered per caller: every workspace for one whom the cluster’s RBAC allows `list workspacetemplates` in API ' +
  'group `tenant.kapi.io`; otherwise the workspaces the caller is a member of (those ' +
  'it manages, or is bound in by a WorkspaceRoleBinding naming it or one of its groups). Never a 403. The listing’s parameters (paging, sorting, `name`, `labelSelector`, …) apply.';

const listResponses = (body: z.ZodType) => ({
  200: { description: 'The page and the number of matching workspaces.', body },
  400: { description: 'A parameter has a bad value; `details.causes[0].field` names it.', body: StatusSchema },
  ...statusResponses,
});

export const listWorkspaceTemplates = defineOperation({
  operationId: 'listTenantWorkspaceTemplates',
  method: 'get',
  path: `${TENANT_V1ALPHA3_BASE}/workspacetemplates`,
  tags: ['tenant'],
  summary: 'List the workspaces the caller may see',
  description: perCaller,
  security: 'bearer',
  query: schemaOf(templates),
  responses: listResponses(page(WorkspaceTemplateSchema, 'WorkspaceTemplateObjectList')),
});

export const listWorkspaceTemplatesV1alpha2 = defineOperation({
  operationId: 'listWorkspaceTemplatesV1alpha2',
  method: 'get',
  path: `${TENANT_V1ALPHA2_BASE}/workspaces`,
  tags: ['tenant'],
  summary: 'List the workspaces the caller may see (KubeSphere ≤ 3.2’s route: WorkspaceTemplates)',
  description: perCaller,
  security: 'bearer',
  query: schemaOf(templates),
  responses: listResponses(page(WorkspaceTemplateSchema, 'WorkspaceTemplateObjectList')),
});

export const listWorkspaces = defineOperation({
  operationId: 'listWorkspaces',
  method: 'get',
  path: `${TENANT_V1ALPHA3_BASE}/workspaces`,
  tags: ['tenant'],
  summary: 'List the workspaces the caller may see, as Workspaces',
  description: perCaller,
  security: 'bearer',
  query: schemaOf(templates),
  responses: listResponses(page(WorkspaceSchema, 'WorkspaceList')),
});

export const readWorkspaceTemplate = defineOperation({
  operationId: 'readTenantWorkspaceTemplate',
  method: 'get',
  path: `${TENANT_V1ALPHA3_BASE}/workspacetemplates/{workspace}`,
  tags: ['tenant'],
  summary: 'Read a workspace',
  description:
    'Its members read it (its manager, and users or groups a WorkspaceRoleBinding names); anyone else needs `get workspacetemplates` ' +
    '(that name) in API group `tenant.kapi.io`.',
  security: 'bearer',
  pathParameters: z.object({ workspace: z.string().describe('The workspace’s name.') }),
  responses: {
    200: { description: 'The workspace.', body: WorkspaceTemplateSchema },
    403: { description: 'Not a member, and the cluster’s RBAC does not allow the read.', body: StatusSchema },
    404: { description: 'No workspace of that name (for a caller who may read any).', body: StatusSchema },
    ...statusResponses,
  },
});

const workspaceName = z.object({ workspace: z.string().describe('The workspace’s name.') });
const managerRule =
  'Naming another user than oneself as its manager needs `bind workspacetemplates` (that name) in API group ' +
  '`tenant.kapi.io` (KubeSphere PR #6385: otherwise anyone who may make a workspace could give one to anyone).';
const writeErrors = {
  400: {
    description: 'The body is not a workspace (or a patch of one); `details.causes[0].field` names the field.',
    body: StatusSchema,
  },
  401: statusResponses[401],
  403: {
    description: 'The cluster’s RBAC does not allow the caller this, or naming that manager (SubjectAccessReview).',
    body: StatusSchema,
  },
  404: { description: 'No such workspace, or no such user for its manager.', body: StatusSchema },
  413: { description: 'The body is larger than 16 KiB.', body: StatusSchema },
  415: { description: 'The body is not JSON.', body: StatusSchema },
  503: statusResponses[503],
};

export const createWorkspaceTemplate = defineOperation({
  operationId: 'createWorkspaceTemplate',
  method: 'post',
  path: `${TENANT_V1ALPHA3_BASE}/workspacetemplates`,
  tags: ['tenant'],
  summary: 'Create a workspace with its manager',
  description:
    'Needs `create workspacetemplates` in API group `tenant.kapi.io`. The manager is the caller unless ' +
    `\`spec.template.spec.manager\` names another user. ${managerRule}`,
  security: 'bearer',
  jsonBody: WorkspaceTemplateSchema,
  responses: {
    201: { description: 'Created.', body: WorkspaceTemplateSchema },
    ...writeErrors,
    409: { description: 'A workspace of that name exists.', body: StatusSchema },
  },
});

export const patchWorkspaceTemplate = defineOperation({
  operationId: 'patchWorkspaceTemplate',
  method: 'patch',
  path: `${TENANT_V1ALPHA3_BASE}/workspacetemplates/{workspace}`,
  tags: ['tenant'],
  summary: 'Change a workspace’s description, alias or manager',
  description:
    'Needs `patch workspacetemplates` (that name) in API group `tenant.kapi.io`. The body is the console’s JSON patch ' +
    '(`add` or `replace` of `/metadata/annotations` and `/spec`) or a merge patch of the same fields. ' +
    managerRule,
  security: 'bearer',
  pathParameters: workspaceName,
  jsonBody: z.union([z.array(z.looseObject({ op: z.string(), path: z.string() })), WorkspaceTemplateSchema]),
  responses: { 200: { description: 'The workspace after the change.', body: WorkspaceTemplateSchema }, ...writeErrors },
});

export const deleteWorkspaceTemplate = defineOperation({
  operationId: 'deleteWorkspaceTemplate',
  method: 'delete',
  path: `${TENANT_V1ALPHA3_BASE}/workspacetemplates/{workspace}`,
  tags: ['tenant'],
  summary: 'Delete a workspace; its projects stay unless asked',
  description:
    'Needs `delete workspacetemplates` (that name) in API group `tenant.kapi.io`. Its namespaces stay and leave the ' +
    'workspace (their `kapi.io/workspace` label is removed: a workspace of that name made later does not inherit ' +
    'them), unless the body is DeleteOptions with `propagationPolicy` Background or Foreground: then each is deleted ' +
    'as the caller, so kube-apiserver’s RBAC decides each (KubeSphere 4.1’s rule). Its memberships and its ' +
    'departments go with it (their GroupBindings, and their role bindings in the namespaces it keeps), and so does its quota.',
  security: 'bearer',
  pathParameters: workspaceName,
  responses: {
    200: {
      description: 'Deleted: a Status of Success.',
      body: z.object({
        kind: z.literal('Status'),
        apiVersion: z.literal('v1'),
        metadata: z.object({}),
        status: z.literal('Success'),
        message: z.string(),
        details: z.object({ name: z.string(), group: z.string(), kind: z.string() }),
      }),
    },
    400: { description: 'propagationPolicy is not Orphan, Background or Foreground.', body: StatusSchema },
    401: statusResponses[401],
    403: {
      description: 'The caller may not delete the workspace, or (with Background or Foreground) one of its namespaces.',
      body: StatusSchema,
    },
    404: { description: 'No workspace of that name.', body: StatusSchema },
    413: { description: 'The body is larger than 16 KiB.', body: StatusSchema },
    415: { description: 'The body is not JSON.', body: StatusSchema },
    503: statusResponses[503],
  },
});

const NamespaceSchema = apiComponent(
  'WorkspaceNamespace',
  z
    .looseObject({
      apiVersion: z.literal('v1'),
      kind: z.literal('Namespace'),
      metadata: metadataSchema,
    })
    .describe('A project: a namespace labelled `kapi.io/workspace=<workspace>`.'),
);
const namespaceParameters = z.object({
  workspace: z.string().describe('The workspace’s name.'),
  namespace: z.string().describe('The project (namespace).'),
});
const projectRight = (verb: string) =>
  `Needs \`${verb} workspacetemplates/namespaces\` (the workspace’s name) in API group \`tenant.kapi.io\` (its admins; ` +
  'viewers read), or the same right on the namespace itself (its project members).';
const notInWorkspace = {
  description: 'No such namespace in this workspace (one of another workspace is not found here).',
  body: StatusSchema,
};

export const listWorkspaceNamespaces = defineOperation({
  operationId: 'listWorkspaceNamespaces',
  method: 'get',
  path: `${TENANT_V1ALPHA2_BASE}/workspaces/{workspace}/namespaces`,
  tags: ['tenant'],
  summary: 'List a workspace’s projects the caller may see',
  description:
    'Every namespace of the workspace for one who may `list workspacetemplates/namespaces` on it in API group ' +
    '`tenant.kapi.io` (its admins and viewers) or list namespaces cluster-wide; otherwise those where the caller is a ' +
    'project member. Never a 403. The namespaces listing’s parameters apply.',
  security: 'bearer',
  pathParameters: workspaceName,
  query: schemaOf(KINDS_BY_RESOURCE.get('namespaces') as KindDefinition),
  responses: {
    ...listResponses(page(NamespaceSchema, 'WorkspaceNamespaceList')),
    404: { description: 'No such workspace.', body: StatusSchema },
  },
});

export const listWorkspaceMemberNamespaces = defineOperation({
  operationId: 'listWorkspaceMemberNamespaces',
  method: 'get',
  path: `${TENANT_V1ALPHA2_BASE}/workspaces/{workspace}/workspacemembers/{member}/namespaces`,
  tags: ['tenant'],
  summary: 'List the workspace’s projects a member may see (the console’s member detail)',
  description:
    'What `listWorkspaceNamespaces` answers the member: every namespace of the workspace when the member may list ' +
    'them all, else those where it is a project member. The caller must itself see every project of the workspace ' +
    '(`list workspacetemplates/namespaces` on it in API group `tenant.kapi.io`, or list namespaces cluster-wide), as ' +
    'KubeSphere asks its `*` roles. The namespaces listing’s parameters apply.',
  security: 'bearer',
  pathParameters: z.object({
    workspace: z.string().describe('The workspace’s name.'),
    member: z.string().describe('The member’s user name.'),
  }),
  query: schemaOf(KINDS_BY_RESOURCE.get('namespaces') as KindDefinition),
  responses: {
    ...listResponses(page(NamespaceSchema, 'WorkspaceMemberNamespaceList')),
    403: { description: 'The caller does not see every project of the workspace.', body: StatusSchema },
    404: { description: 'No such workspace, or no such user.', body: StatusSchema },
  },
});

export const createWorkspaceNamespace = defineOperation({
  operationId: 'createWorkspaceNamespace',
  method: 'post',
  path: `${TENANT_V1ALPHA2_BASE}/workspaces/{workspace}/namespaces`,
  tags: ['tenant'],
  summary: 'Create a project in a workspace; its creator becomes its admin',
  description:
    'Needs `create workspacetemplates/namespaces` (the workspace’s name) in API group `tenant.kapi.io` (its admins ' +
    'and self-provisioners). The namespace is made with the label `kapi.io/workspace` and the annotation ' +
    '`kapi.io/creator`; the creator gets the project role `admin` (a RoleBinding `<user>-admin`).',
  security: 'bearer',
  pathParameters: workspaceName,
  jsonBody: NamespaceSchema,
  responses: {
    201: { description: 'Created.', body: NamespaceSchema },
    400: { description: 'The body is not a namespace, or its name is not a DNS label.', body: StatusSchema },
    401: statusResponses[401],
    403: { description: 'The caller may not create projects in this workspace.', body: StatusSchema },
    404: { description: 'No such workspace.', body: StatusSchema },
    409: {
      description: 'A namespace of that name exists (in another workspace: move it with PATCH instead).',
      body: StatusSchema,
    },
    413: writeErrors[413],
    415: writeErrors[415],
    503: statusResponses[503],
  },
});

export const readWorkspaceNamespace = defineOperation({
  operationId: 'readWorkspaceNamespace',
  method: 'get',
  path: `${TENANT_V1ALPHA2_BASE}/workspaces/{workspace}/namespaces/{namespace}`,
  tags: ['tenant'],
  summary: 'Read a project of a workspace',
  description: projectRight('get'),
  security: 'bearer',
  pathParameters: namespaceParameters,
  responses: {
    200: { description: 'The namespace.', body: NamespaceSchema },
    403: { description: 'The caller may not read it.', body: StatusSchema },
    404: notInWorkspace,
    ...statusResponses,
  },
});

const editResponses = {
  200: { description: 'The namespace after the change.', body: NamespaceSchema },
  400: {
    description: 'The body is not a merge patch of `metadata.labels` and `metadata.annotations` only.',
    body: StatusSchema,
  },
  401: statusResponses[401],
  403: {
    description: 'The caller may not change it, or (a move) may not create projects in the workspace it names.',
    body: StatusSchema,
  },
  404: {
    description: 'No such namespace in this workspace, or no workspace of the name it moves to.',
    body: StatusSchema,
  },
  413: writeErrors[413],
  415: writeErrors[415],
  503: statusResponses[503],
};
const editDescription = (verb: string) =>
  `${projectRight(verb)} Only \`metadata.labels\` and \`metadata.annotations\` change (a merge patch); a \`kapi.io/workspace\` ` +
  'label naming another workspace **moves** the project there in this one call, which also needs ' +
  '`create workspacetemplates/namespaces` on that workspace; kapi’s controller then moves the workspace roles’ ' +
  'bindings, and the project roles given to departments of the workspace it leaves are deleted. The label cannot be ' +
  'removed here.';

export const patchWorkspaceNamespace = defineOperation({
  operationId: 'patchWorkspaceNamespace',
  method: 'patch',
  path: `${TENANT_V1ALPHA2_BASE}/workspaces/{workspace}/namespaces/{namespace}`,
  tags: ['tenant'],
  summary: 'Change a project’s labels and annotations, or move it to another workspace',
  description: editDescription('patch'),
  security: 'bearer',
  pathParameters: namespaceParameters,
  jsonBody: z.looseObject({ metadata: metadataSchema.partial() }),
  responses: editResponses,
});

export const updateWorkspaceNamespace = defineOperation({
  operationId: 'updateWorkspaceNamespace',
  method: 'put',
  path: `${TENANT_V1ALPHA2_BASE}/workspaces/{workspace}/namespaces/{namespace}`,
  tags: ['tenant'],
  summary: 'Change a project’s labels and annotations, or move it to another workspace (as PATCH)',
  description: editDescription('update'),
  security: 'bearer',
  pathParameters: namespaceParameters,
  jsonBody: NamespaceSchema,
  responses: editResponses,
});

export const deleteWorkspaceNamespace = defineOperation({
  operationId: 'deleteWorkspaceNamespace',
  method: 'delete',
  path: `${TENANT_V1ALPHA2_BASE}/workspaces/{workspace}/namespaces/{namespace}`,
  tags: ['tenant'],
  summary: 'Delete a project of a workspace',
  description:
    'With `delete workspacetemplates/namespaces` (the workspace’s name) in API group `tenant.kapi.io`, kapi deletes ' +
    'it; otherwise it is deleted as the caller, so kube-apiserver’s RBAC decides.',
  security: 'bearer',
  pathParameters: namespaceParameters,
  responses: {
    200: { description: 'Deletion begun: the namespace, Terminating.', body: NamespaceSchema },
    403: { description: 'The caller may not delete it.', body: StatusSchema },
    404: notInWorkspace,
    ...statusResponses,
  },
});

export const tenantOperations = [
  listWorkspaceTemplates,
  readWorkspaceTemplate,
  createWorkspaceTemplate,
  patchWorkspaceTemplate,
  deleteWorkspaceTemplate,
  listWorkspaces,
  listWorkspaceTemplatesV1alpha2,
  listWorkspaceNamespaces,
  listWorkspaceMemberNamespaces,
  createWorkspaceNamespace,
  readWorkspaceNamespace,
  patchWorkspaceNamespace,
  updateWorkspaceNamespace,
  deleteWorkspaceNamespace,
] as const;
