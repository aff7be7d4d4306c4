import { z } from 'zod';
import { defineOperation } from '../../../openapi/operation.js';
import { StatusSchema, apiComponent, statusResponses } from '../../../openapi/schemas.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../../resources/v1alpha3/kinds/kind-table.js';
import { schemaOf } from '../../resources/v1alpha3/listing/listing-query.js';

/**
 * The iam.kapi.io/v1alpha2 routes KubeSphere 3.4's console reads at every page load (SPEC §17): the signed-in user
 * with its platform role, and the role templates its menus are drawn from (its platform role's, its cluster role's).
 */
export const IAM_V1ALPHA2_BASE = '/kapis/iam.kapi.io/v1alpha2';

const usersQuery = schemaOf(KINDS_BY_RESOURCE.get('users') as KindDefinition);
const clusterRolesQuery = schemaOf(KINDS_BY_RESOURCE.get('clusterroles') as KindDefinition);

const metadataSchema = z.looseObject({
  name: z.string(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

export const PlatformUserSchema = apiComponent(
  'PlatformUser',
  z
    .looseObject({
      apiVersion: z.literal('iam.kapi.io/v1alpha2'),
      kind: z.literal('User'),
      metadata: metadataSchema.describe(
        'With the annotation `iam.kapi.io/globalrole`: the user’s platform role (absent when it has none).',
      ),
      spec: z.looseObject({ email: z.string().optional(), groups: z.array(z.string()).optional() }),
      status: z.looseObject({ state: z.string().optional(), lastLoginTime: z.string().optional() }).optional(),
    })
    .describe('A User in KubeSphere 3.4’s shape; never its password hash or its failed logins’ addresses.'),
);

export const RoleTemplateSchema = apiComponent(
  'RoleTemplate',
  z
    .looseObject({
      apiVersion: z.string(),
      kind: z.string().describe('GlobalRole or ClusterRole.'),
      metadata: metadataSchema.describe(
        'The annotation `iam.kapi.io/role-template-rules` holds the console menus it opens: JSON `{module: action}`.',
      ),
      rules: z.array(z.looseObject({ verbs: z.array(z.string()) })).optional(),
    })
    .describe('A role template: one of the parts a role is aggregated from (`iam.kapi.io/aggregation-roles`).'),
);

const named = z.object({ name: z.string().describe('The user’s name.') });
const forbidden = {
  description: 'Another user’s, and the cluster’s RBAC does not allow the caller to read it (SubjectAccessReview).',
  body: StatusSchema,
};

export const readPlatformUser = defineOperation({
  operationId: 'readPlatformUser',
  method: 'get',
  path: `${IAM_V1ALPHA2_BASE}/users/{name}`,
  tags: ['iam'],
  summary: 'Read a user with its platform role (KubeSphere 3.4’s shape)',
  description:
    'Users read themselves; reading another needs `get users` (that name) in API group `iam.kapi.io`. Served from ' +
    'the watched Users and GlobalRoleBindings.',
  security: 'bearer',
  pathParameters: named,
  responses: {
    200: { description: 'The user.', body: PlatformUserSchema },
    403: forbidden,
    404: { description: 'No user of that name.', body: StatusSchema },
    ...statusResponses,
  },
});

export const listUserGlobalRoleTemplates = defineOperation({
  operationId: 'listUserGlobalRoleTemplates',
  method: 'get',
  path: `${IAM_V1ALPHA2_BASE}/users/{name}/globalroles`,
  tags: ['iam'],
  summary: 'The role templates of a user’s platform role (the console’s platform menus)',
  description:
    'A bare array, as KubeSphere answers it: the GlobalRoles named by the annotation `iam.kapi.io/aggregation-roles` ' +
    'of the user’s GlobalRole, in order; empty when the user has no platform role. Users read their own; another’s ' +
    'needs `get users/globalroles` (that name) in API group `iam.kapi.io`.',
  security: 'bearer',
  pathParameters: named,
  responses: {
    200: { description: 'The templates.', body: z.array(RoleTemplateSchema) },
    403: forbidden,
    404: { description: 'No user of that name.', body: StatusSchema },
    ...statusResponses,
  },
});

export const listClusterMemberRoleTemplates = defineOperation({
  operationId: 'listClusterMemberRoleTemplates',
  method: 'get',
  path: `${IAM_V1ALPHA2_BASE}/clustermembers/{name}/clusterroles`,
  tags: ['iam'],
  summary: 'The role templates of a user’s cluster role (the console’s cluster menus)',
  description:
    'A bare array: the ClusterRoles named by the annotation `iam.kapi.io/aggregation-roles` of the ClusterRole that ' +
    'the user’s cluster membership binds (the ClusterRoleBinding labelled `iam.kapi.io/user-ref=<user>` naming the ' +
    'user); empty when the user is no cluster member or the role has no templates. Users read their own; another’s ' +
    'needs `get clustermembers/clusterroles` (that name) in API group `iam.kapi.io`.',
  security: 'bearer',
  pathParameters: named,
  responses: {
    200: { description: 'The templates.', body: z.array(RoleTemplateSchema) },
    403: forbidden,
    ...statusResponses,
  },
});

const pageOf = (item: z.ZodType, id: string) =>
  apiComponent(
    id,
    z.object({ items: z.array(item), totalItems: z.int().min(0).describe('Matching items, over all pages.') }),
  );
const badParameter = {
  description: 'A parameter has a bad value; `details.causes[0].field` names it.',
  body: StatusSchema,
};

export const listPlatformUsers = defineOperation({
  operationId: 'listPlatformUsers',
  method: 'get',
  path: `${IAM_V1ALPHA2_BASE}/users`,
  tags: ['iam'],
  summary: 'List users, each with its platform role (KubeSphere 3.4’s shape)',
  description:
    'The listing’s parameters of users apply (paging, sorting by `createTime`, `name`, `lastLoginTime`, filters ' +
    '`name`, `email`, `status`, …); `globalrole=<role>` keeps that role’s holders. Never a password hash. Needs ' +
    '`list users` in API group `iam.kapi.io`. Served from the watched Users and GlobalRoleBindings.',
  security: 'bearer',
  query: usersQuery.extend({ globalrole: z.string().optional().describe('Only the holders of this GlobalRole.') }),
  responses: {
    200: { description: 'The page of users.', body: pageOf(PlatformUserSchema, 'PlatformUserList') },
    400: badParameter,
    403: forbidden,
    ...statusResponses,
  },
});

export const listClusterMembers = defineOperation({
  operationId: 'listClusterMembers',
  method: 'get',
  path: `${IAM_V1ALPHA2_BASE}/clustermembers`,
  tags: ['iam'],
  summary: 'List the cluster’s members: users with a cluster role, each with it',
  description:
    'The users named by kapi’s cluster memberships (ClusterRoleBindings labelled `iam.kapi.io/user-ref`), each with ' +
    'its role in the annotation `iam.kapi.io/clusterrole`; `clusterrole=<role>` keeps that role’s members. The ' +
    'listing’s parameters of users apply. Needs `list clustermembers` in API group `iam.kapi.io`.',
  security: 'bearer',
  query: usersQuery.extend({
    clusterrole: z.string().optional().describe('Only the members holding this ClusterRole.'),
  }),
  responses: {
    200: { description: 'The page of members.', body: pageOf(PlatformUserSchema, 'PlatformUserList') },
    400: badParameter,
    403: forbidden,
    ...statusResponses,
  },
});

export const listClusterRoles = defineOperation({
  operationId: 'listPlatformClusterRoles',
  method: 'get',
  path: `${IAM_V1ALPHA2_BASE}/clusterroles`,
  tags: ['iam'],
  summary: 'List the cluster roles (the console’s Cluster Roles and member forms)',
  description:
    'The cluster’s ClusterRoles, with the listing’s parameters (`annotation=kapi.io/creator` keeps the roles made ' +
    'for the platform, as the console asks). Needs `list clusterroles` in API group `iam.kapi.io`.',
  security: 'bearer',
  query: clusterRolesQuery,
  responses: {
    200: { description: 'The page of ClusterRoles.', body: pageOf(RoleTemplateSchema, 'PlatformClusterRoleList') },
    400: badParameter,
    403: forbidden,
    ...statusResponses,
  },
});

export const listNamespaceMemberRoleTemplates = defineOperation({
  operationId: 'listNamespaceMemberRoleTemplates',
  method: 'get',
  path: `${IAM_V1ALPHA2_BASE}/namespaces/{namespace}/members/{name}/roles`,
  tags: ['iam'],
  summary: 'The role templates of a user’s role in a project (the console’s project menus)',
  description:
    'A bare array: the Roles of the namespace named by the annotation `iam.kapi.io/aggregation-roles` of the Role ' +
    'that the user’s project membership binds (a RoleBinding of the namespace labelled `iam.kapi.io/user-ref=<user>` ' +
    'naming the user); empty when the user is no member or the role has no templates. Users read their own; ' +
    'another’s needs `get members/roles` (that name) in API group `iam.kapi.io` in the namespace.',
  security: 'bearer',
  pathParameters: z.object({
    namespace: z.string().describe('The project (namespace).'),
    name: z.string().describe('The user’s name.'),
  }),
  responses: {
    200: { description: 'The templates.', body: z.array(RoleTemplateSchema) },
    403: forbidden,
    ...statusResponses,
  },
});

export const iamOperations = [
  listPlatformUsers,
  readPlatformUser,
  listUserGlobalRoleTemplates,
  listClusterMembers,
  listClusterMemberRoleTemplates,
  listClusterRoles,
  listNamespaceMemberRoleTemplates,
] as const;
