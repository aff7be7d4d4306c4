import { z } from 'zod';
import { defineOperation } from '../../../openapi/operation.js';
import { StatusSchema, apiComponent, statusResponses } from '../../../openapi/schemas.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../../resources/v1alpha3/kinds/kind-table.js';
import { schemaOf } from '../../resources/v1alpha3/listing/listing-query.js';

/**
 * The iam.kapi.io/v1alpha2 routes KubeSphere 3.4's console reads at every page load (SPEC §17): the signed-in user
 * with its platform role, and the role templates its menus are drawn from (its platform role's, its cluster role's).
 */
import { IAM_V1ALPHA2_BASE } from '../../../auth/account/operations.js';

export { IAM_V1ALPHA2_BASE };

export const usersQuery = schemaOf(KINDS_BY_RESOURCE.get('users') as KindDefinition);
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
export const forbidden = {
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

export const pageOf = (item: z.ZodType, id: string) =>
  apiComponent(
    id,
    z.object({ items: z.array(item), totalItems: z.int().min(0).describe('Matching items, over all pages.') }),
  );
export const badParameter = {
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
    '`list users` in API group `iam.kapi.io`; one who may only add members to a workspace (`create` on ' +
    '`workspacetemplates/workspacemembers` of one, a workspace admin choosing whom to invite) gets each user’s name, ' +
    'creation time and e-mail only. Served from the watched Users and GlobalRoleBindings.',
  security: 'bearer',
  query: usersQuery.extend({
    globalrole: z.string().optional().describe('Only the holders of this GlobalRole.'),
    ingroup: z
      .string()
      .optional()
      .describe(
        'Only the users in this department (its GroupBindings); needs `list workspacetemplates/groups` of its ' +
          'workspace, or `list users`.',
      ),
    notingroup: z.string().optional().describe('Only the users not in this department; the same right.'),
  }),
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

export const readClusterRole = defineOperation({
  operationId: 'readPlatformClusterRole',
  method: 'get',
  path: `${IAM_V1ALPHA2_BASE}/clusterroles/{clusterrole}`,
  tags: ['iam'],
  summary: 'Read a cluster role (the console’s cluster role detail)',
  description:
    'The ClusterRole as kapi’s watch has it. Needs `get clusterroles` (that name) in API group `iam.kapi.io`.',
  security: 'bearer',
  pathParameters: z.object({ clusterrole: z.string().describe('The ClusterRole’s name.') }),
  responses: {
    200: { description: 'The ClusterRole.', body: RoleTemplateSchema },
    403: forbidden,
    404: { description: 'No ClusterRole of that name.', body: StatusSchema },
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

const UserBodySchema = apiComponent(
  'PlatformUserBody',
  z
    .looseObject({
      apiVersion: z.string().optional(),
      kind: z.string().optional(),
      metadata: z.looseObject({
        name: z
          .string()
          .optional()
          .describe('The user’s name: at most 63 lowercase letters, digits, `-` and `.` (it is a label value).'),
        annotations: z
          .record(z.string(), z.string())
          .optional()
          .describe(
            '`iam.kapi.io/globalrole`: the platform role (creation: `platform-regular` when absent); ' +
              '`kapi.io/description`, `kapi.io/alias-name`. Other annotations are not set through this API.',
          ),
      }),
      spec: z
        .looseObject({
          email: z.string().optional().describe('An e-mail address no other user has; required at creation.'),
          password: z
            .string()
            .optional()
            .describe(
              'Creation only: the password in clear, under the password policy; kapi stores its bcrypt hash. ' +
                'Afterwards: PUT …/users/{name}/password.',
            ),
          lang: z.string().optional().describe('The console’s language (en, zh, …).'),
        })
        .optional(),
      status: z.looseObject({ state: z.string().optional().describe('Active or Disabled (update only).') }).optional(),
    })
    .describe(
      'A User as KubeSphere 3.4’s console sends it. Groups and identity-provider links are not set through this API ' +
        '(groups are rights at kube-apiserver): `kubectl` by a cluster administrator.',
    ),
);

export const DeletedStatusSchema = apiComponent(
  'DeletedStatus',
  z.object({
    kind: z.literal('Status'),
    apiVersion: z.literal('v1'),
    metadata: z.object({}),
    status: z.literal('Success'),
    message: z.string(),
    details: z.object({ name: z.string(), group: z.string(), kind: z.string(), uid: z.string().optional() }),
  }),
);

const userWriteErrors = {
  400: {
    description:
      'The body is not a User, a field breaks its rule (`details.causes[0].field` names it: an invalid e-mail, a ' +
      'password failing the policy, …), or its name is not the URL’s.',
    body: StatusSchema,
  },
  401: statusResponses[401],
  403: {
    description:
      'The cluster’s RBAC does not allow the caller this on users (SubjectAccessReview), or the platform role given ' +
      'grants a right the caller does not hold (the message names it).',
    body: StatusSchema,
  },
  404: { description: 'No such user, or no such platform role.', body: StatusSchema },
  409: { description: 'A user of that name exists, or the e-mail address is another user’s.', body: StatusSchema },
  413: { description: 'The body is larger than 16 KiB.', body: StatusSchema },
  415: { description: 'The body is not JSON.', body: StatusSchema },
  503: statusResponses[503],
};

export const createPlatformUser = defineOperation({
  operationId: 'createPlatformUser',
  method: 'post',
  path: `${IAM_V1ALPHA2_BASE}/users`,
  tags: ['iam'],
  summary: 'Create a user with a password and a platform role',
  description:
    'Needs `create users` in API group `iam.kapi.io`. The password is hashed by kapi (bcrypt) and never answered. ' +
    'The platform role (`platform-regular` unless named) is given only if the caller holds every right it grants, or ' +
    'may `bind` that GlobalRole (RBAC’s rule against escalation): its GlobalRoleBinding `<user>-<role>` is realized ' +
    'in the cluster’s RBAC by kapi’s controller.',
  security: 'bearer',
  jsonBody: UserBodySchema,
  responses: {
    201: { description: 'Created: the user as answered by a read.', body: PlatformUserSchema },
    ...userWriteErrors,
  },
});

const editDescription =
  'Sets e-mail, language, description, alias, state (Active, Disabled: a disabled user’s sessions end) and platform ' +
  'role; the password and groups are not changed here. Users edit their own profile; anything else, or the state or ' +
  'role of themselves, needs `%verb% users` (that name) in API group `iam.kapi.io`, and a new role the rule against ' +
  'escalation of creation. The fields named are written over the stored user (no resourceVersion check: a login ' +
  'recorded meanwhile does not refuse an administrator’s edit).';

export const updatePlatformUser = defineOperation({
  operationId: 'updatePlatformUser',
  method: 'put',
  path: `${IAM_V1ALPHA2_BASE}/users/{name}`,
  tags: ['iam'],
  summary: 'Update a user (the console’s edit, enable and disable)',
  description: `${editDescription.replace('%verb%', 'update')} An editable annotation left out is removed.`,
  security: 'bearer',
  pathParameters: named,
  jsonBody: UserBodySchema,
  responses: { 200: { description: 'The user after the change.', body: PlatformUserSchema }, ...userWriteErrors },
});

export const patchPlatformUser = defineOperation({
  operationId: 'patchPlatformUser',
  method: 'patch',
  path: `${IAM_V1ALPHA2_BASE}/users/{name}`,
  tags: ['iam'],
  summary: 'Change some fields of a user (a merge patch)',
  description: `${editDescription.replace('%verb%', 'patch')} Only what the body names changes.`,
  security: 'bearer',
  pathParameters: named,
  jsonBody: UserBodySchema,
  responses: { 200: { description: 'The user after the change.', body: PlatformUserSchema }, ...userWriteErrors },
});

export const deletePlatformUser = defineOperation({
  operationId: 'deletePlatformUser',
  method: 'delete',
  path: `${IAM_V1ALPHA2_BASE}/users/{name}`,
  tags: ['iam'],
  summary: 'Delete a user, its bindings and its sessions',
  description:
    'Needs `delete users` (that name) in API group `iam.kapi.io`. Every binding labelled `iam.kapi.io/user-ref=<user>` ' +
    '(its platform role, cluster and project memberships) is deleted and its login sessions end.',
  security: 'bearer',
  pathParameters: named,
  responses: {
    200: {
      description: 'Deleted: a Status of Success, as kube-apiserver answers a deletion it finished.',
      body: DeletedStatusSchema,
    },
    403: forbidden,
    404: { description: 'No user of that name.', body: StatusSchema },
    ...statusResponses,
  },
});

const ClusterMemberSchema = apiComponent(
  'ClusterMember',
  z.object({
    username: z.string().describe('The user.'),
    roleRef: z.string().describe('The ClusterRole the user holds as a member.'),
  }),
);

const memberWriteErrors = {
  400: {
    description: 'The body is not a member (or, for several, 1 to 100 of them), or its username is not the URL’s.',
    body: StatusSchema,
  },
  401: statusResponses[401],
  403: {
    description:
      'The cluster’s RBAC does not allow the caller this on clustermembers in `iam.kapi.io`, or the ClusterRole ' +
      'grants a right the caller does not hold and may not bind (the message names it).',
    body: StatusSchema,
  },
  404: { description: 'No such user, or no such ClusterRole.', body: StatusSchema },
  413: { description: 'The body is larger than 16 KiB.', body: StatusSchema },
  415: { description: 'The body is not JSON.', body: StatusSchema },
  503: statusResponses[503],
};

const memberDescription =
  'A membership is a ClusterRoleBinding `<user>-<role>` labelled `iam.kapi.io/user-ref=<user>`, written by kapi once ' +
  'the caller passed RBAC’s rule against escalation (it may `bind` that ClusterRole, or holds every right it grants); ' +
  'a user’s other cluster memberships end.';

export const createClusterMembers = defineOperation({
  operationId: 'createClusterMembers',
  method: 'post',
  path: `${IAM_V1ALPHA2_BASE}/clustermembers`,
  tags: ['iam'],
  summary: 'Invite users to the cluster, each with a cluster role',
  description: `Needs \`create clustermembers\` in API group \`iam.kapi.io\`. ${memberDescription}`,
  security: 'bearer',
  jsonBody: z.array(ClusterMemberSchema),
  responses: { 200: { description: 'The members made.', body: z.array(ClusterMemberSchema) }, ...memberWriteErrors },
});

export const updateClusterMember = defineOperation({
  operationId: 'updateClusterMember',
  method: 'put',
  path: `${IAM_V1ALPHA2_BASE}/clustermembers/{name}`,
  tags: ['iam'],
  summary: 'Change a cluster member’s role',
  description: `Needs \`update clustermembers\` (that name) in API group \`iam.kapi.io\`. ${memberDescription}`,
  security: 'bearer',
  pathParameters: named,
  jsonBody: ClusterMemberSchema,
  responses: { 200: { description: 'The member.', body: ClusterMemberSchema }, ...memberWriteErrors },
});

export const deleteClusterMember = defineOperation({
  operationId: 'deleteClusterMember',
  method: 'delete',
  path: `${IAM_V1ALPHA2_BASE}/clustermembers/{name}`,
  tags: ['iam'],
  summary: 'Remove a user from the cluster’s members',
  description:
    'Needs `delete clustermembers` (that name) in API group `iam.kapi.io`. Deletes the user’s memberships ' +
    '(ClusterRoleBindings labelled `iam.kapi.io/user-ref=<user>`; a platform role’s realization is not one).',
  security: 'bearer',
  pathParameters: named,
  responses: {
    200: { description: 'Removed: a Status of Success.', body: DeletedStatusSchema },
    403: forbidden,
    404: { description: 'The user is no cluster member.', body: StatusSchema },
    ...statusResponses,
  },
});

const GlobalRoleBodySchema = apiComponent(
  'GlobalRoleBody',
  z
    .looseObject({
      metadata: z.looseObject({
        name: z.string().describe('The role’s name.'),
        annotations: z
          .record(z.string(), z.string())
          .optional()
          .describe(
            '`iam.kapi.io/aggregation-roles`: a JSON array of role templates the role is made of (its rules are ' +
              'theirs); `kapi.io/description`, `kapi.io/alias-name`.',
          ),
      }),
      rules: z
        .array(z.looseObject({ verbs: z.array(z.string()) }))
        .optional()
        .describe('RBAC rules, for a role made of no templates.'),
    })
    .describe('A GlobalRole as KubeSphere 3.4’s console sends it.'),
);

/** The writes of one kind of role (GlobalRoles, ClusterRoles): create, replace, merge-patch, delete. */
function roleWriteOperations(kind: {
  /** The operations' name: GlobalRole, ClusterRole. */
  name: 'GlobalRole' | 'ClusterRole';
  resource: 'globalroles' | 'clusterroles';
  path: string;
  what: string;
  /** What is said of the kind's writes beyond the common. */
  about: string;
  /** Why a role that exists is not written through the API. */
  notWritable: string;
  /** Who counts as holding the role (for deletion). */
  holders: string;
}) {
  const needs = (verb: string, named = true) =>
    `Needs \`${verb} ${kind.resource}\`${named ? ' (that name)' : ''} in API group \`iam.kapi.io\`.`;
  const errors = {
    400: {
      description: `The body is not a ${kind.name}, a field is invalid (the cause names it), or its name is not the URL’s.`,
      body: StatusSchema,
    },
    401: statusResponses[401],
    403: {
      description:
        `The cluster’s RBAC does not allow the caller this on ${kind.resource} in \`iam.kapi.io\`, the role would ` +
        `grant a right the caller does not hold (the message names it), or the role ${kind.notWritable}.`,
      body: StatusSchema,
    },
    404: { description: `No ${kind.what} of that name, or a template named does not exist.`, body: StatusSchema },
    413: { description: 'The body is larger than 16 KiB.', body: StatusSchema },
    415: { description: 'The body is not JSON.', body: StatusSchema },
    503: statusResponses[503],
  };
  const common =
    'A role made of templates (`iam.kapi.io/aggregation-roles`) gets their rules, as KubeSphere builds it; one made ' +
    'of none keeps the body’s rules. No one makes a role granting more than they hold, unless RBAC lets them ' +
    `\`escalate\` ${kind.resource}. ${kind.about}`;
  const pathParameters = z.object({ name: z.string().describe(`The ${kind.name}’s name.`) });
  const changed = { 200: { description: 'The role after the change.', body: RoleTemplateSchema }, ...errors };
  return {
    create: defineOperation({
      operationId: `create${kind.name}`,
      method: 'post',
      path: kind.path,
      tags: ['iam'],
      summary: `Create a ${kind.what}`,
      description: `${needs('create', false)} ${common}`,
      security: 'bearer',
      jsonBody: GlobalRoleBodySchema,
      responses: {
        201: { description: 'Created.', body: RoleTemplateSchema },
        ...errors,
        409: { description: 'A role of that name exists.', body: StatusSchema },
      },
    }),
    update: defineOperation({
      operationId: `update${kind.name}`,
      method: 'put',
      path: `${kind.path}/{name}`,
      tags: ['iam'],
      summary: `Change a ${kind.what}’s templates, rules, description`,
      description: `${needs('update')} ${common}`,
      security: 'bearer',
      pathParameters,
      jsonBody: GlobalRoleBodySchema,
      responses: changed,
    }),
    patch: defineOperation({
      operationId: `patch${kind.name}`,
      method: 'patch',
      path: `${kind.path}/{name}`,
      tags: ['iam'],
      summary: `Change some fields of a ${kind.what} (a merge patch; the console’s Edit Information)`,
      description: `${needs('patch')} The body is merged into the role as stored, then written as a change is. ${common}`,
      security: 'bearer',
      pathParameters,
      jsonBody: z.looseObject({}).describe(`A JSON merge patch of the ${kind.name}.`),
      responses: changed,
    }),
    remove: defineOperation({
      operationId: `delete${kind.name}`,
      method: 'delete',
      path: `${kind.path}/{name}`,
      tags: ['iam'],
      summary: `Delete a ${kind.what} no one holds`,
      description: `${needs('delete')} A role ${kind.holders} still give is not deleted (409): give their users another first.`,
      security: 'bearer',
      pathParameters,
      responses: {
        200: { description: 'Deleted: a Status of Success.', body: DeletedStatusSchema },
        403: { description: `${forbidden.description} Or the role ${kind.notWritable}.`, body: StatusSchema },
        404: { description: `No ${kind.what} of that name.`, body: StatusSchema },
        409: { description: 'Bindings still give the role.', body: StatusSchema },
        ...statusResponses,
      },
    }),
  };
}

const globalRoleWrites = roleWriteOperations({
  name: 'GlobalRole',
  resource: 'globalroles',
  path: `${IAM_V1ALPHA2_BASE}/globalroles`,
  what: 'platform role',
  about: 'kapi’s controller realizes the role as the ClusterRole `kapi:globalrole:<name>`.',
  notWritable: 'is a role template',
  holders: 'GlobalRoleBindings',
});
export const createGlobalRole = globalRoleWrites.create;
export const updateGlobalRole = globalRoleWrites.update;
export const patchGlobalRole = globalRoleWrites.patch;
export const deleteGlobalRole = globalRoleWrites.remove;

const clusterRoleWrites = roleWriteOperations({
  name: 'ClusterRole',
  resource: 'clusterroles',
  path: `${IAM_V1ALPHA2_BASE}/clusterroles`,
  what: 'cluster role',
  about:
    'The role is the ClusterRole itself, as the cluster’s RBAC reads it; the platform’s own are those carrying ' +
    '`kapi.io/creator` (set to the caller on creation).',
  notWritable:
    'is not one made for the platform: a preset (cluster-admin, cluster-viewer), a role template, kapi’s realization ' +
    'of a platform role, or a ClusterRole without `kapi.io/creator`',
  holders: 'ClusterRoleBindings or RoleBindings',
});
export const createClusterRole = clusterRoleWrites.create;
export const updateClusterRole = clusterRoleWrites.update;
export const patchClusterRole = clusterRoleWrites.patch;
export const deleteClusterRole = clusterRoleWrites.remove;

const globalRolesQuery = schemaOf(KINDS_BY_RESOURCE.get('globalroles') as KindDefinition);

export const listGlobalRoles = defineOperation({
  operationId: 'listPlatformGlobalRoles',
  method: 'get',
  path: `${IAM_V1ALPHA2_BASE}/globalroles`,
  tags: ['iam'],
  summary: 'List the platform roles (and role templates)',
  description:
    'GlobalRoles with the listing’s parameters: `annotation=kapi.io/creator` keeps the platform roles (as the ' +
    'console’s role picker asks), `label=iam.kapi.io/role-template` the templates. Needs `list globalroles` in API ' +
    'group `iam.kapi.io`.',
  security: 'bearer',
  query: globalRolesQuery,
  responses: {
    200: { description: 'The page of GlobalRoles.', body: pageOf(RoleTemplateSchema, 'GlobalRoleList') },
    400: badParameter,
    403: forbidden,
    ...statusResponses,
  },
});

export const readGlobalRole = defineOperation({
  operationId: 'readPlatformGlobalRole',
  method: 'get',
  path: `${IAM_V1ALPHA2_BASE}/globalroles/{name}`,
  tags: ['iam'],
  summary: 'Read a platform role',
  description: 'Needs `get globalroles` (that name) in API group `iam.kapi.io`.',
  security: 'bearer',
  pathParameters: z.object({ name: z.string().describe('The GlobalRole’s name.') }),
  responses: {
    200: { description: 'The GlobalRole.', body: RoleTemplateSchema },
    403: forbidden,
    404: { description: 'No GlobalRole of that name.', body: StatusSchema },
    ...statusResponses,
  },
});

export const iamOperations = [
  createPlatformUser,
  updatePlatformUser,
  patchPlatformUser,
  deletePlatformUser,
  listGlobalRoles,
  readGlobalRole,
  createClusterMembers,
  updateClusterMember,
  deleteClusterMember,
  createGlobalRole,
  updateGlobalRole,
  patchGlobalRole,
  deleteGlobalRole,
  createClusterRole,
  updateClusterRole,
  patchClusterRole,
  deleteClusterRole,
  listPlatformUsers,
  readPlatformUser,
  listUserGlobalRoleTemplates,
  listClusterMembers,
  listClusterMemberRoleTemplates,
  listClusterRoles,
  readClusterRole,
  listNamespaceMemberRoleTemplates,
] as const;
