import { z } from 'zod';
import { defineOperation } from '../../openapi/operation.js';
import { StatusSchema, apiComponent, statusResponses } from '../../openapi/schemas.js';
import { QUOTA_RESOURCES } from '../../workspace-quota/quota.js';
import { TENANT_V1ALPHA2_BASE } from './operations.js';

/**
 * Workspace quotas at the console's routes (KubeSphere 3.4.1's `tenant.kubesphere.io/v1alpha2`
 * `workspaces/{workspace}/resourcequotas`): the quota of a workspace's projects together, kept as a `quota.kapi.io`
 * ResourceQuota and enforced by kapi's webhook on pod creation.
 */

const quantities = z.record(z.string(), z.union([z.string(), z.number()]));

export const WorkspaceQuotaSchema = apiComponent(
  'WorkspaceResourceQuota',
  z
    .looseObject({
      apiVersion: z.literal('quota.kapi.io/v1alpha2'),
      kind: z.literal('ResourceQuota'),
      metadata: z.looseObject({ name: z.string(), labels: z.record(z.string(), z.string()).optional() }),
      spec: z.looseObject({
        quota: z.looseObject({
          hard: quantities.describe(`Hard limits, of: ${QUOTA_RESOURCES.join(', ')}.`),
        }),
        selector: z
          .record(z.string(), z.string())
          .optional()
          .describe('Set by kapi: `kapi.io/workspace: <workspace>` (what is sent is replaced).'),
      }),
      status: z
        .looseObject({
          total: z.looseObject({ hard: quantities.optional(), used: quantities.optional() }).optional(),
          namespaces: z
            .array(z.looseObject({ namespace: z.string(), hard: quantities.optional(), used: quantities.optional() }))
            .optional(),
        })
        .optional()
        .describe('What the workspace’s pods use, in total and per project (kapi keeps it).'),
    })
    .describe('A workspace quota.'),
);

const parameters = z.object({
  workspace: z.string().describe('The workspace’s name.'),
  resourcequota: z.string().describe('The quota’s name (the console names it after the workspace).'),
});

const right = (verb: string) =>
  `Needs \`${verb} workspacetemplates/resourcequotas\` (the workspace’s name) in API group \`tenant.kapi.io\`: ` +
  (verb === 'get'
    ? 'the workspace’s admins and viewers, and who views or manages workspaces on the platform.'
    : 'who manages workspaces on the platform (a quota is the platform’s limit on a tenant, so a workspace’s own ' +
      'admin reads it and does not raise it, unless a role grants this).');

const writeErrors = {
  400: {
    description:
      'A limit of a resource the quota cannot limit, a value that is no quantity, scopes, or a name unlike the URL’s.',
    body: StatusSchema,
  },
  401: statusResponses[401],
  403: { description: 'The cluster’s RBAC does not allow the caller this (SubjectAccessReview).', body: StatusSchema },
  413: { description: 'The body is larger than 16 KiB.', body: StatusSchema },
  415: { description: 'The body is not JSON.', body: StatusSchema },
  503: statusResponses[503],
};
const notFound = {
  description: 'No workspace of that name, or no quota of that name of this workspace.',
  body: StatusSchema,
};

export const createWorkspaceQuota = defineOperation({
  operationId: 'createWorkspaceResourceQuota',
  method: 'post',
  path: `${TENANT_V1ALPHA2_BASE}/workspaces/{workspace}/resourcequotas`,
  tags: ['tenant'],
  summary: 'Set a workspace’s quota',
  description: `${right('create')} kapi labels it with the workspace and selects the workspace’s projects.`,
  security: 'bearer',
  pathParameters: parameters.pick({ workspace: true }),
  jsonBody: WorkspaceQuotaSchema,
  responses: {
    200: { description: 'Created.', body: WorkspaceQuotaSchema },
    ...writeErrors,
    404: notFound,
    409: { description: 'A quota of that name exists.', body: StatusSchema },
  },
});

export const readWorkspaceQuota = defineOperation({
  operationId: 'readWorkspaceResourceQuota',
  method: 'get',
  path: `${TENANT_V1ALPHA2_BASE}/workspaces/{workspace}/resourcequotas/{resourcequota}`,
  tags: ['tenant'],
  summary: 'A workspace’s quota and what its projects use',
  description: right('get'),
  security: 'bearer',
  pathParameters: parameters,
  responses: {
    200: { description: 'The quota.', body: WorkspaceQuotaSchema },
    401: statusResponses[401],
    403: writeErrors[403],
    404: notFound,
    503: statusResponses[503],
  },
});

export const updateWorkspaceQuota = defineOperation({
  operationId: 'updateWorkspaceResourceQuota',
  method: 'put',
  path: `${TENANT_V1ALPHA2_BASE}/workspaces/{workspace}/resourcequotas/{resourcequota}`,
  tags: ['tenant'],
  summary: 'Change a workspace’s quota',
  description:
    `${right('update')} The limits sent replace the stored ones. A limit lowered below what is used refuses new ` +
    'pods of the workspace until enough go; running pods stay.',
  security: 'bearer',
  pathParameters: parameters,
  jsonBody: WorkspaceQuotaSchema,
  responses: {
    200: { description: 'The quota after the change.', body: WorkspaceQuotaSchema },
    ...writeErrors,
    404: notFound,
    409: {
      description: 'The body names a `metadata.resourceVersion` that is no longer the quota’s (changed since read).',
      body: StatusSchema,
    },
  },
});

export const deleteWorkspaceQuota = defineOperation({
  operationId: 'deleteWorkspaceResourceQuota',
  method: 'delete',
  path: `${TENANT_V1ALPHA2_BASE}/workspaces/{workspace}/resourcequotas/{resourcequota}`,
  tags: ['tenant'],
  summary: 'Lift a workspace’s quota',
  description: right('delete'),
  security: 'bearer',
  pathParameters: parameters,
  responses: {
    200: {
      description: 'Deleted: a Status of Success.',
      body: z.object({
        kind: z.literal('Status'),
        apiVersion: z.literal('v1'),
        metadata: z.object({}),
        status: z.literal('Success'),
        message: z.string(),
        details: z.object({ name: z.string(), group: z.string(), kind: z.string(), uid: z.string().optional() }),
      }),
    },
    401: statusResponses[401],
    403: writeErrors[403],
    404: notFound,
    503: statusResponses[503],
  },
});

export const workspaceQuotaOperations = [
  createWorkspaceQuota,
  readWorkspaceQuota,
  updateWorkspaceQuota,
  deleteWorkspaceQuota,
] as const;
