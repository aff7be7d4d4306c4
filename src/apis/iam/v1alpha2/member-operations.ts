import { z } from 'zod';
import { defineOperation } from '../../../openapi/operation.js';
import { StatusSchema, apiComponent, statusResponses } from '../../../openapi/schemas.js';
import {
  DeletedStatusSchema,
  IAM_V1ALPHA2_BASE,
  PlatformUserSchema,
  RoleTemplateSchema,
  badParameter,
  pageOf,
} from './operations.js';

/** The workspace members and roles, and the project members and roles (SPEC §18), at KubeSphere 3.4's routes. */

const WS = `${IAM_V1ALPHA2_BASE}/workspaces/{workspace}`;
const NS = `${IAM_V1ALPHA2_BASE}/namespaces/{namespace}`;
const workspace = z.string().describe('The workspace’s name.');
const namespace = z.string().describe('The project (namespace).');
const user = z.string().describe('The user’s name.');

const MemberSchema = apiComponent(
  'Member',
  z.object({
    username: z.string().describe('The user.'),
    roleRef: z
      .string()
      .describe('Its role: a workspace role `<workspace>-admin|regular|viewer|self-provisioner`, or a project role.'),
  }),
);

const ScopedRoleSchema = apiComponent(
  'ScopedRole',
  z
    .looseObject({
      apiVersion: z.string(),
      kind: z.string().describe('WorkspaceRole or Role.'),
      metadata: z.looseObject({ name: z.string() }),
    })
    .describe(
      'A built-in workspace or project role, or a role template; `iam.kapi.io/aggregation-roles` names the templates ' +
        'a role is made of. Its rights are realized in RBAC by kapi (SPEC §18), not listed here.',
    ),
);

const unauthorized = statusResponses[401];
const unavailable = statusResponses[503];
const refused = (what: string) => ({
  description: `The cluster’s RBAC does not allow the caller ${what} (SubjectAccessReview).`,
  body: StatusSchema,
});
const noWorkspace = { description: 'No such workspace.', body: StatusSchema };
const bodyErrors = {
  413: { description: 'The body is larger than 16 KiB.', body: StatusSchema },
  415: { description: 'The body is not JSON.', body: StatusSchema },
};

const workspaceRight = (verb: string, sub: string) =>
  `Needs \`${verb} workspacetemplates/${sub}\` (the workspace’s name) in API group \`tenant.kapi.io\`, which ` +
  'kapi realizes for the workspace’s members by their role, or the same right cluster-wide.';

export const listWorkspaceRoles = defineOperation({
  operationId: 'listWorkspaceRoles',
  method: 'get',
  path: `${WS}/workspaceroles`,
  tags: ['iam'],
  summary: 'List a workspace’s roles (or, with `label=iam.kapi.io/role-template=true`, the role templates)',
  description: `${workspaceRight('list', 'workspaceroles')} Parameters: \`name\` (contains), \`label\` and \`annotation\` (\`key\` or \`key=value\`), \`limit\`, \`page\`.`,
  security: 'bearer',
  pathParameters: z.object({ workspace }),
  responses: {
    200: { description: 'The page of roles.', body: pageOf(ScopedRoleSchema, 'ScopedRoleList') },
    403: refused('to list them'),
    404: noWorkspace,
    401: unauthorized,
    503: unavailable,
  },
});

export const readWorkspaceRole = defineOperation({
  operationId: 'readWorkspaceRole',
  method: 'get',
  path: `${WS}/workspaceroles/{role}`,
  tags: ['iam'],
  summary: 'Read a workspace role',
  description: workspaceRight('get', 'workspaceroles'),
  security: 'bearer',
  pathParameters: z.object({ workspace, role: z.string().describe('`<workspace>-<base>`.') }),
  responses: {
    200: { description: 'The role.', body: ScopedRoleSchema },
    403: refused('to read it'),
    404: { description: 'No such workspace or role.', body: StatusSchema },
    401: unauthorized,
    503: unavailable,
  },
});

/** The parameters the console sends (the users listing's others apply too: see listPlatformUsers). */
const memberListQuery = z.object({
  name: z.string().optional().describe('Users whose name contains this.'),
  sortBy: z.string().optional().describe('As for users: `createTime`, `name`, `lastLoginTime`, …'),
  ascending: z.string().optional(),
  limit: z.string().optional(),
  page: z.string().optional(),
});
const membersQuery = memberListQuery.extend({
  workspacerole: z.string().optional().describe('Only members holding this role (`<workspace>-<base>`).'),
});

export const listWorkspaceMembers = defineOperation({
  operationId: 'listWorkspaceMembers',
  method: 'get',
  path: `${WS}/workspacemembers`,
  tags: ['iam'],
  summary: 'List a workspace’s members, each with its role',
  description:
    `${workspaceRight('list', 'workspacemembers')} Members are the workspace’s manager (its admin) and the users ` +
    'its WorkspaceRoleBindings name; each User carries `iam.kapi.io/workspacerole`. The users listing’s parameters ' +
    'apply.',
  security: 'bearer',
  pathParameters: z.object({ workspace }),
  query: membersQuery,
  responses: {
    200: { description: 'The page of members.', body: pageOf(PlatformUserSchema, 'PlatformUserList') },
    400: badParameter,
    403: refused('to list them'),
    404: noWorkspace,
    401: unauthorized,
    503: unavailable,
  },
});

export const readWorkspaceMember = defineOperation({
  operationId: 'readWorkspaceMember',
  method: 'get',
  path: `${WS}/workspacemembers/{name}`,
  tags: ['iam'],
  summary: 'Read a workspace member with its role',
  description: workspaceRight('get', 'workspacemembers'),
  security: 'bearer',
  pathParameters: z.object({ workspace, name: user }),
  responses: {
    200: { description: 'The member.', body: PlatformUserSchema },
    403: refused('to read it'),
    404: { description: 'No such workspace, or the user is not its member.', body: StatusSchema },
    401: unauthorized,
    503: unavailable,
  },
});

const workspaceMemberErrors = {
  400: {
    description:
      'The body is not 1 to 100 members `{username, roleRef}` (`details.causes[0].field` names the entry), or the ' +
      'username is not the URL’s.',
    body: StatusSchema,
  },
  401: unauthorized,
  403: {
    description:
      'The cluster’s RBAC does not allow the caller this, or the role grants a right the caller does not hold (the ' +
      'message names it): no one gives more than they hold, in this workspace or any other.',
    body: StatusSchema,
  },
  404: { description: 'No such workspace, user or workspace role.', body: StatusSchema },
  409: {
    description: 'The user is the workspace’s manager: its admin while it manages it (change the manager instead).',
    body: StatusSchema,
  },
  ...bodyErrors,
  503: unavailable,
};

const membershipNote =
  'A membership is a WorkspaceRoleBinding `<user>-<role>` labelled `kapi.io/workspace` and `iam.kapi.io/user-ref`; ' +
  'a member has one role in a workspace (its others end). The rights follow once kapi’s controller has realized it.';

export const createWorkspaceMembers = defineOperation({
  operationId: 'createWorkspaceMembers',
  method: 'post',
  path: `${WS}/workspacemembers`,
  tags: ['iam'],
  summary: 'Invite users to a workspace, each with a workspace role',
  description: `${workspaceRight('create', 'workspacemembers')} ${membershipNote}`,
  security: 'bearer',
  pathParameters: z.object({ workspace }),
  jsonBody: z.array(MemberSchema),
  responses: { 200: { description: 'The members made.', body: z.array(MemberSchema) }, ...workspaceMemberErrors },
});

export const updateWorkspaceMember = defineOperation({
  operationId: 'updateWorkspaceMember',
  method: 'put',
  path: `${WS}/workspacemembers/{name}`,
  tags: ['iam'],
  summary: 'Change a workspace member’s role',
  description: `${workspaceRight('update', 'workspacemembers')} ${membershipNote}`,
  security: 'bearer',
  pathParameters: z.object({ workspace, name: user }),
  jsonBody: MemberSchema,
  responses: { 200: { description: 'The member.', body: MemberSchema }, ...workspaceMemberErrors },
});

export const deleteWorkspaceMember = defineOperation({
  operationId: 'deleteWorkspaceMember',
  method: 'delete',
  path: `${WS}/workspacemembers/{name}`,
  tags: ['iam'],
  summary: 'Remove a user from a workspace',
  description:
    `${workspaceRight('delete', 'workspacemembers')} Deletes the user’s WorkspaceRoleBindings of the workspace; ` +
    'its rights there end once kapi’s controller has acted.',
  security: 'bearer',
  pathParameters: z.object({ workspace, name: user }),
  responses: {
    200: { description: 'Removed: a Status of Success.', body: DeletedStatusSchema },
    403: refused('this'),
    404: { description: 'No such workspace, or the user is not its member by a binding.', body: StatusSchema },
    409: workspaceMemberErrors[409],
    401: unauthorized,
    503: unavailable,
  },
});

export const listWorkspaceMemberRoleTemplates = defineOperation({
  operationId: 'listWorkspaceMemberRoleTemplates',
  method: 'get',
  path: `${WS}/workspacemembers/{name}/workspaceroles`,
  tags: ['iam'],
  summary: 'The role templates of a user’s workspace role (the console’s workspace menus)',
  description:
    'A bare array, empty when the user is no member. Users read their own; another’s needs ' +
    workspaceRight('get', 'workspacemembers').replace(/^Needs /, ''),
  security: 'bearer',
  pathParameters: z.object({ workspace, name: user }),
  responses: {
    200: { description: 'The templates.', body: z.array(RoleTemplateSchema) },
    403: refused('to read another’s'),
    401: unauthorized,
    503: unavailable,
  },
});

const projectRight = (verb: string) =>
  `Needs \`${verb} members\` in API group \`iam.kapi.io\` in the namespace (project admins and viewers hold it there, ` +
  'as do the admins and viewers of its workspace).';

export const listNamespaceRoles = defineOperation({
  operationId: 'listNamespaceRoles',
  method: 'get',
  path: `${NS}/roles`,
  tags: ['iam'],
  summary: 'List a project’s roles (or, with `label=iam.kapi.io/role-template=true`, the role templates)',
  description:
    'Needs `list roles` in API group `iam.kapi.io` in the namespace. The roles are `admin`, `operator` and `viewer` ' +
    '(realized as the ClusterRoles `kapi:namespace-role:<role>`). Parameters as for workspace roles.',
  security: 'bearer',
  pathParameters: z.object({ namespace }),
  responses: {
    200: { description: 'The page of roles.', body: pageOf(ScopedRoleSchema, 'ScopedRoleList') },
    403: refused('to list them'),
    404: { description: 'No such namespace.', body: StatusSchema },
    401: unauthorized,
    503: unavailable,
  },
});

export const readNamespaceRole = defineOperation({
  operationId: 'readNamespaceRole',
  method: 'get',
  path: `${NS}/roles/{role}`,
  tags: ['iam'],
  summary: 'Read a project role (the console’s project role detail)',
  description:
    'Needs `get roles` in API group `iam.kapi.io` in the namespace. The roles are `admin`, `operator` and `viewer`.',
  security: 'bearer',
  pathParameters: z.object({ namespace, role: z.string().describe('`admin`, `operator` or `viewer`.') }),
  responses: {
    200: { description: 'The role.', body: ScopedRoleSchema },
    403: refused('to read it'),
    404: { description: 'No such namespace or role.', body: StatusSchema },
    401: unauthorized,
    503: unavailable,
  },
});

export const listNamespaceMembers = defineOperation({
  operationId: 'listNamespaceMembers',
  method: 'get',
  path: `${NS}/members`,
  tags: ['iam'],
  summary: 'List a project’s members, each with its role',
  description:
    `${projectRight('list')} Members are the users of the namespace’s RoleBindings labelled ` +
    '`iam.kapi.io/user-ref`; each User carries `iam.kapi.io/role`. Filter `role=<role>`; the users listing’s ' +
    'parameters apply.',
  security: 'bearer',
  pathParameters: z.object({ namespace }),
  query: memberListQuery.extend({ role: z.string().optional().describe('Only members holding this project role.') }),
  responses: {
    200: { description: 'The page of members.', body: pageOf(PlatformUserSchema, 'PlatformUserList') },
    400: badParameter,
    403: refused('to list them'),
    401: unauthorized,
    503: unavailable,
  },
});

export const readNamespaceMember = defineOperation({
  operationId: 'readNamespaceMember',
  method: 'get',
  path: `${NS}/members/{name}`,
  tags: ['iam'],
  summary: 'Read a project member with its role',
  description: projectRight('get'),
  security: 'bearer',
  pathParameters: z.object({ namespace, name: user }),
  responses: {
    200: { description: 'The member.', body: PlatformUserSchema },
    403: refused('to read it'),
    404: { description: 'The user is not a member of the project.', body: StatusSchema },
    401: unauthorized,
    503: unavailable,
  },
});

const projectMemberErrors = {
  400: workspaceMemberErrors[400],
  401: unauthorized,
  403: {
    description:
      'kube-apiserver refused the caller the RoleBinding (it is written as the caller, so RBAC’s own rule against ' +
      'escalation applies), or the caller may not do this.',
    body: StatusSchema,
  },
  404: { description: 'No such user or project role.', body: StatusSchema },
  ...bodyErrors,
  503: unavailable,
};

const projectMembershipNote =
  'A membership is a RoleBinding `<user>-<role>` in the namespace to the ClusterRole `kapi:namespace-role:<role>`, ' +
  'labelled `iam.kapi.io/user-ref`, written as the caller; a member has one role in a project (its others end).';

export const createNamespaceMembers = defineOperation({
  operationId: 'createNamespaceMembers',
  method: 'post',
  path: `${NS}/members`,
  tags: ['iam'],
  summary: 'Invite users to a project, each with a project role',
  description: projectMembershipNote,
  security: 'bearer',
  pathParameters: z.object({ namespace }),
  jsonBody: z.array(MemberSchema),
  responses: { 200: { description: 'The members made.', body: z.array(MemberSchema) }, ...projectMemberErrors },
});

export const updateNamespaceMember = defineOperation({
  operationId: 'updateNamespaceMember',
  method: 'put',
  path: `${NS}/members/{name}`,
  tags: ['iam'],
  summary: 'Change a project member’s role',
  description: projectMembershipNote,
  security: 'bearer',
  pathParameters: z.object({ namespace, name: user }),
  jsonBody: MemberSchema,
  responses: { 200: { description: 'The member.', body: MemberSchema }, ...projectMemberErrors },
});

export const deleteNamespaceMember = defineOperation({
  operationId: 'deleteNamespaceMember',
  method: 'delete',
  path: `${NS}/members/{name}`,
  tags: ['iam'],
  summary: 'Remove a user from a project',
  description: 'Deletes the user’s member RoleBindings of the namespace, as the caller.',
  security: 'bearer',
  pathParameters: z.object({ namespace, name: user }),
  responses: {
    200: { description: 'Removed: a Status of Success.', body: DeletedStatusSchema },
    403: projectMemberErrors[403],
    404: { description: 'The user is not a member of the project.', body: StatusSchema },
    401: unauthorized,
    503: unavailable,
  },
});

export const memberOperations = [
  listWorkspaceRoles,
  readWorkspaceRole,
  listWorkspaceMembers,
  readWorkspaceMember,
  createWorkspaceMembers,
  updateWorkspaceMember,
  deleteWorkspaceMember,
  listWorkspaceMemberRoleTemplates,
  listNamespaceRoles,
  readNamespaceRole,
  listNamespaceMembers,
  readNamespaceMember,
  createNamespaceMembers,
  updateNamespaceMember,
  deleteNamespaceMember,
] as const;
