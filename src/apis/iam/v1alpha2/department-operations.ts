import { z } from 'zod';
import { defineOperation, type ResponseDefinition } from '../../../openapi/operation.js';
import { StatusSchema, apiComponent, statusResponses } from '../../../openapi/schemas.js';
import { DeletedStatusSchema, IAM_V1ALPHA2_BASE, badParameter, pageOf } from './operations.js';

/**
 * A workspace's departments (KubeSphere 3.4's Groups, the console's workspace settings → Departments): the departments
 * themselves, who is in them (GroupBindings), and the workspace and project roles given to them.
 */
const WS = `${IAM_V1ALPHA2_BASE}/workspaces/{workspace}`;
const workspace = z.string().describe('The workspace’s name.');
const TAGS = ['iam'];
const unauthorized = statusResponses[401];
const unavailable = statusResponses[503];
const refused = (what: string) => ({
  description: `The cluster’s RBAC does not allow the caller ${what} (SubjectAccessReview).`,
  body: StatusSchema,
});
const bodyErrors = {
  413: { description: 'The body is larger than 16 KiB.', body: StatusSchema },
  415: { description: 'The body is not JSON.', body: StatusSchema },
};
const groupsRight = (verb: string) =>
  `Needs \`${verb} workspacetemplates/groups\` (the workspace’s name) in API group \`tenant.kapi.io\` (a workspace ` +
  'admin’s; a viewer may read).';

const GroupSchema = apiComponent(
  'Group',
  z
    .looseObject({
      apiVersion: z.literal('iam.kapi.io/v1alpha2'),
      kind: z.literal('Group'),
      metadata: z.looseObject({ name: z.string(), generateName: z.string().optional() }),
    })
    .describe(
      'A department: labelled `kapi.io/workspace` (and `iam.kapi.io/group-parent` in the tree); its display name is ' +
        '`metadata.generateName`, its name that plus five random characters. Its members are asserted the RBAC group ' +
        '`kapi:department:<name>`.',
    ),
);
const GroupBindingSchema = apiComponent(
  'GroupBinding',
  z
    .looseObject({
      apiVersion: z.literal('iam.kapi.io/v1alpha2'),
      kind: z.literal('GroupBinding'),
      groupRef: z.looseObject({ name: z.string() }),
      users: z.array(z.string()),
    })
    .describe('One user in a department, labelled `iam.kapi.io/group-ref`, `iam.kapi.io/user-ref` and the workspace.'),
);
const DepartmentRoleBindingSchema = apiComponent(
  'DepartmentRoleBinding',
  z
    .looseObject({ kind: z.string(), metadata: z.looseObject({ name: z.string() }) })
    .describe(
      'A WorkspaceRoleBinding or RoleBinding of a department, labelled `iam.kapi.io/group-ref`; its subject is the ' +
        'Group `kapi:department:<name>`.',
    ),
);

const groupPath = z.object({ workspace, group: z.string().describe('The department’s name.') });
const noDepartment = { description: 'No such workspace, or no such department in it.', body: StatusSchema };

export const listDepartments = defineOperation({
  operationId: 'listDepartments',
  method: 'get',
  path: `${WS}/groups`,
  tags: TAGS,
  summary: 'A workspace’s departments',
  description: `${groupsRight('list')} Listed with the listing’s parameters (name, label, sortBy, paging).`,
  security: 'bearer',
  pathParameters: z.object({ workspace }),
  responses: {
    200: { description: 'The departments.', body: pageOf(GroupSchema, 'GroupList') },
    400: badParameter,
    403: refused('to list the departments'),
    404: noDepartment,
    401: unauthorized,
    503: unavailable,
  },
});

export const createDepartment = defineOperation({
  operationId: 'createDepartment',
  method: 'post',
  path: `${WS}/groups`,
  tags: TAGS,
  summary: 'Make a department',
  description:
    `${groupsRight('create')} The body is a Group with \`metadata.generateName\` (its display name, unique in the ` +
    'workspace); kapi sets the workspace label, keeps `iam.kapi.io/group-parent` only when it names a department of ' +
    'the workspace, and keeps the console’s annotations.',
  security: 'bearer',
  pathParameters: z.object({ workspace }),
  jsonBody: GroupSchema,
  responses: {
    200: { description: 'The department made.', body: GroupSchema },
    400: { description: 'The body is not a Group with a valid generateName.', body: StatusSchema },
    403: refused('to make departments'),
    404: noDepartment,
    409: { description: 'A department of that display name is already in the workspace.', body: StatusSchema },
    ...bodyErrors,
    401: unauthorized,
    503: unavailable,
  },
});

export const readDepartment = defineOperation({
  operationId: 'readDepartment',
  method: 'get',
  path: `${WS}/groups/{group}`,
  tags: TAGS,
  summary: 'A department',
  description: groupsRight('get'),
  security: 'bearer',
  pathParameters: groupPath,
  responses: {
    200: { description: 'The department.', body: GroupSchema },
    403: refused('to read the departments'),
    404: noDepartment,
    401: unauthorized,
    503: unavailable,
  },
});

const staleBody: Record<number, ResponseDefinition> = {
  409: {
    description: 'It changed since the body’s `metadata.resourceVersion` was read: read it again.',
    body: StatusSchema,
  },
};
const changeGroup = (method: 'put' | 'patch') =>
  defineOperation({
    operationId: method === 'put' ? 'updateDepartment' : 'patchDepartment',
    method,
    path: `${WS}/groups/{group}`,
    tags: TAGS,
    summary: method === 'put' ? 'Change a department' : 'Change a department (merge patch)',
    description:
      `${groupsRight(method === 'put' ? 'update' : 'patch')} Only its annotations (alias, the console’s records of ` +
      'its roles) and its parent change; its workspace stays.',
    security: 'bearer',
    pathParameters: groupPath,
    jsonBody: GroupSchema,
    responses: {
      200: { description: 'The department changed.', body: GroupSchema },
      400: { description: 'The body is no Group, or names another department.', body: StatusSchema },
      403: refused('to change departments'),
      404: noDepartment,
      ...(method === 'put' ? staleBody : {}),
      ...bodyErrors,
      401: unauthorized,
      503: unavailable,
    },
  });
export const updateDepartment = changeGroup('put');
export const patchDepartment = changeGroup('patch');

export const deleteDepartment = defineOperation({
  operationId: 'deleteDepartment',
  method: 'delete',
  path: `${WS}/groups/{group}`,
  tags: TAGS,
  summary: 'Delete a department, its sub-departments, and what they were given',
  description:
    `${groupsRight('delete')} Its GroupBindings, and the workspace and project role bindings of it and of its ` +
    'sub-departments, go with it: its members lose those rights at once.',
  security: 'bearer',
  pathParameters: groupPath,
  responses: {
    200: { description: 'Deleted: a Status of Success.', body: DeletedStatusSchema },
    403: refused('to delete departments'),
    404: noDepartment,
    401: unauthorized,
    503: unavailable,
  },
});

export const listDepartmentMembers = defineOperation({
  operationId: 'listDepartmentMembers',
  method: 'get',
  path: `${WS}/groupbindings`,
  tags: TAGS,
  summary: 'Who is in the workspace’s departments',
  description: `${groupsRight('list')} \`labelSelector\` (\`iam.kapi.io/group-ref\`, \`iam.kapi.io/user-ref\`) and \`user\` filter.`,
  security: 'bearer',
  pathParameters: z.object({ workspace }),
  responses: {
    200: { description: 'The bindings.', body: pageOf(GroupBindingSchema, 'GroupBindingList') },
    400: badParameter,
    403: refused('to list the departments'),
    404: noDepartment,
    401: unauthorized,
    503: unavailable,
  },
});

export const createDepartmentMembers = defineOperation({
  operationId: 'createDepartmentMembers',
  method: 'post',
  path: `${WS}/groupbindings`,
  tags: TAGS,
  summary: 'Put users in departments',
  description:
    `${groupsRight('update')} The body is \`[{userName, groupName}]\` (1 to 100). Each user must exist and each ` +
    'department be the workspace’s; and since a member of a department holds what it was given, the caller must be ' +
    'able to give each of its workspace and project roles (RBAC’s rule against escalation). A user already in the ' +
    'department keeps the binding it has. All are checked before any is written.',
  security: 'bearer',
  pathParameters: z.object({ workspace }),
  jsonBody: z.array(z.object({ userName: z.string(), groupName: z.string() })),
  responses: {
    200: { description: 'The bindings, one per entry.', body: z.array(GroupBindingSchema) },
    400: { description: 'The body is not a list of 1 to 100 entries.', body: StatusSchema },
    403: refused('to change the departments, or to give what a department holds'),
    404: { description: 'No such workspace, department or user.', body: StatusSchema },
    ...bodyErrors,
    401: unauthorized,
    503: unavailable,
  },
});

export const deleteDepartmentMember = defineOperation({
  operationId: 'deleteDepartmentMember',
  method: 'delete',
  path: `${WS}/groupbindings/{groupbinding}`,
  tags: TAGS,
  summary: 'Take a user out of a department',
  description: groupsRight('update'),
  security: 'bearer',
  pathParameters: z.object({ workspace, groupbinding: z.string().describe('The GroupBinding’s name.') }),
  responses: {
    200: { description: 'Deleted: a Status of Success.', body: DeletedStatusSchema },
    403: refused('to change the departments'),
    404: { description: 'No such binding in the workspace.', body: StatusSchema },
    401: unauthorized,
    503: unavailable,
  },
});

export const listDepartmentWorkspaceRoleBindings = defineOperation({
  operationId: 'listDepartmentWorkspaceRoleBindings',
  method: 'get',
  path: `${WS}/workspacerolebindings`,
  tags: TAGS,
  summary: 'The workspace roles given to the workspace’s departments',
  description:
    `${groupsRight('list')} The workspace’s WorkspaceRoleBindings of departments; \`labelSelector\` ` +
    '(`iam.kapi.io/group-ref=<group>`) and `rolename` filter.',
  security: 'bearer',
  pathParameters: z.object({ workspace }),
  responses: {
    200: { description: 'The bindings.', body: pageOf(DepartmentRoleBindingSchema, 'DepartmentRoleBindingList') },
    400: badParameter,
    403: refused('to list the departments'),
    404: noDepartment,
    401: unauthorized,
    503: unavailable,
  },
});

export const createDepartmentWorkspaceRoleBindings = defineOperation({
  operationId: 'createDepartmentWorkspaceRoleBindings',
  method: 'post',
  path: `${WS}/workspacerolebindings`,
  tags: TAGS,
  summary: 'Give a department a workspace role',
  description:
    'Needs `create workspacetemplates/workspacemembers` (the workspace’s name) in `tenant.kapi.io`, and the rule ' +
    'against escalation for the role, as for a member. The body is `[WorkspaceRoleBinding]` whose subject is a ' +
    '`Group` naming a department of the workspace and whose `roleRef.name` is one of its roles; kapi writes the ' +
    'binding with the subject `kapi:department:<group>`.',
  security: 'bearer',
  pathParameters: z.object({ workspace }),
  jsonBody: z.array(z.looseObject({})),
  responses: {
    200: { description: 'The bindings made.', body: z.array(DepartmentRoleBindingSchema) },
    400: { description: 'The body is not 1 to 100 such bindings.', body: StatusSchema },
    403: refused('to add members, or to give that role'),
    404: { description: 'No such workspace, department or role.', body: StatusSchema },
    ...bodyErrors,
    401: unauthorized,
    503: unavailable,
  },
});

export const deleteDepartmentWorkspaceRoleBinding = defineOperation({
  operationId: 'deleteDepartmentWorkspaceRoleBinding',
  method: 'delete',
  path: `${WS}/workspacerolebindings/{rolebinding}`,
  tags: TAGS,
  summary: 'Take a workspace role from a department',
  description: 'Needs `delete workspacetemplates/workspacemembers` (the workspace’s name) in `tenant.kapi.io`.',
  security: 'bearer',
  pathParameters: z.object({ workspace, rolebinding: z.string().describe('The binding’s name.') }),
  responses: {
    200: { description: 'Deleted: a Status of Success.', body: DeletedStatusSchema },
    403: refused('to remove members'),
    404: { description: 'No binding of a department of that name in the workspace.', body: StatusSchema },
    401: unauthorized,
    503: unavailable,
  },
});

export const listDepartmentRoleBindings = defineOperation({
  operationId: 'listDepartmentRoleBindings',
  method: 'get',
  path: `${WS}/rolebindings`,
  tags: TAGS,
  summary: 'The project roles given to the workspace’s departments',
  description:
    `${groupsRight('list')} A bare array, as KubeSphere answers it: the RoleBindings of departments in the ` +
    'workspace’s projects; `labelSelector` (`iam.kapi.io/group-ref=<group>`) filters.',
  security: 'bearer',
  pathParameters: z.object({ workspace }),
  responses: {
    200: { description: 'The bindings.', body: z.array(DepartmentRoleBindingSchema) },
    400: badParameter,
    403: refused('to list the departments'),
    404: noDepartment,
    401: unauthorized,
    503: unavailable,
  },
});

const NS = `${IAM_V1ALPHA2_BASE}/namespaces/{namespace}`;
const namespace = z.string().describe('The project (namespace).');

export const createDepartmentRoleBindings = defineOperation({
  operationId: 'createDepartmentRoleBindings',
  method: 'post',
  path: `${NS}/rolebindings`,
  tags: TAGS,
  summary: 'Give a department a project role',
  description:
    'The body is `[RoleBinding]` whose subject is a `Group` naming a department of the project’s workspace and ' +
    'whose `roleRef.name` is a project role (`admin`, `operator`, `viewer`). kapi writes the RoleBinding **as the ' +
    'caller**, subject `kapi:department:<group>`, so kube-apiserver applies RBAC’s rule against escalation itself.',
  security: 'bearer',
  pathParameters: z.object({ namespace }),
  jsonBody: z.array(z.looseObject({})),
  responses: {
    200: { description: 'The bindings made.', body: z.array(DepartmentRoleBindingSchema) },
    400: { description: 'The body is not 1 to 100 such bindings.', body: StatusSchema },
    403: refused('to write that RoleBinding (kube-apiserver’s answer)'),
    404: { description: 'No such project, department or role.', body: StatusSchema },
    ...bodyErrors,
    401: unauthorized,
    503: unavailable,
  },
});

export const deleteDepartmentRoleBinding = defineOperation({
  operationId: 'deleteDepartmentRoleBinding',
  method: 'delete',
  path: `${NS}/rolebindings/{rolebinding}`,
  tags: TAGS,
  summary: 'Take a project role from a department',
  description: 'Deleted **as the caller**: kube-apiserver decides. Only a department’s RoleBinding is deleted here.',
  security: 'bearer',
  pathParameters: z.object({ namespace, rolebinding: z.string().describe('The RoleBinding’s name.') }),
  responses: {
    200: { description: 'Deleted: a Status of Success.', body: DeletedStatusSchema },
    403: refused('to delete that RoleBinding (kube-apiserver’s answer)'),
    404: { description: 'No department’s RoleBinding of that name in the project.', body: StatusSchema },
    401: unauthorized,
    503: unavailable,
  },
});

export const departmentOperations = [
  listDepartments,
  createDepartment,
  readDepartment,
  updateDepartment,
  patchDepartment,
  deleteDepartment,
  listDepartmentMembers,
  createDepartmentMembers,
  deleteDepartmentMember,
  listDepartmentWorkspaceRoleBindings,
  createDepartmentWorkspaceRoleBindings,
  deleteDepartmentWorkspaceRoleBinding,
  listDepartmentRoleBindings,
  createDepartmentRoleBindings,
  deleteDepartmentRoleBinding,
] as const;
