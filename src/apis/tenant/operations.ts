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
  'group `tenant.kapi.io`; otherwise the workspaces the caller is a member of (until workspace members exist: those ' +
  'it manages). Never a 403. The listing’s parameters (paging, sorting, `name`, `labelSelector`, …) apply.';

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
    'Its members read it (until workspace members exist: its manager); anyone else needs `get workspacetemplates` ' +
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
    'as the caller, so kube-apiserver’s RBAC decides each (KubeSphere 4.1’s rule).',
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

export const tenantOperations = [
  listWorkspaceTemplates,
  readWorkspaceTemplate,
  createWorkspaceTemplate,
  patchWorkspaceTemplate,
  deleteWorkspaceTemplate,
  listWorkspaces,
  listWorkspaceTemplatesV1alpha2,
] as const;
