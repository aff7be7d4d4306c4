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

export const tenantOperations = [
  listWorkspaceTemplates,
  readWorkspaceTemplate,
  listWorkspaces,
  listWorkspaceTemplatesV1alpha2,
] as const;
