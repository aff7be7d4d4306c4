import { z } from 'zod';
import { defineOperation } from '../../openapi/operation.js';
import { StatusSchema, apiComponent, statusResponses } from '../../openapi/schemas.js';

/** kapi's account API (SPEC §14): password changes and login records, under iam.kapi.io/v1beta1. */
export const IAM_BASE = '/kapis/iam.kapi.io/v1beta1';
/** The largest body of an account request: a password change is a few hundred bytes. */
export const ACCOUNT_BODY_LIMIT_BYTES = 16 * 1024;

const userName = z.object({
  name: z.string().describe('The User’s name (metadata.name).'),
});

export const PasswordChangeSchema = apiComponent(
  'PasswordChange',
  z
    .object({
      currentPassword: z
        .string()
        .optional()
        .describe('The password now; required when users change their own password, ignored for an administrator.'),
      password: z
        .string()
        .describe(
          'The new password: at least passwordPolicy.minLength characters (8 by default), at most 72 bytes, no control characters, not the user name.',
        ),
    })
    .describe('Unknown fields are ignored.'),
);

const PasswordChangedSchema = apiComponent(
  'PasswordChanged',
  z.object({
    endedSessions: z.int().min(0).describe('The user’s login sessions that ended (every one but the caller’s own).'),
  }),
);

export const changeUserPassword = defineOperation({
  operationId: 'changeUserPassword',
  method: 'put',
  path: `${IAM_BASE}/users/{name}/password`,
  tags: ['iam'],
  summary: 'Change a user’s password; the user’s other login sessions end',
  description:
    'Users change their own password with currentPassword. Anyone else needs `update` on `users/password` in API ' +
    'group `iam.kapi.io` from the cluster’s RBAC (an administrator) and sends no currentPassword. Wrong current ' +
    'passwords count towards the same limits as failed logins. A User linked to an identity provider has its ' +
    'password there: 400.',
  security: 'bearer',
  pathParameters: userName,
  jsonBody: PasswordChangeSchema,
  responses: {
    200: { description: 'Changed.', body: PasswordChangedSchema },
    400: {
      description:
        'The new password breaks a rule of the policy (the message names it), currentPassword is missing or wrong, ' +
        'the body is not JSON, or the user’s password is kept by an identity provider.',
      body: StatusSchema,
    },
    401: statusResponses[401],
    403: { description: 'Another user’s password, without the right to update users/password.', body: StatusSchema },
    404: { description: 'No such User (asked by an administrator).', body: StatusSchema },
    413: { description: 'The body is larger than 16 KiB.', body: StatusSchema },
    415: { description: 'The body is not application/json.', body: StatusSchema },
    429: {
      description: 'Too many wrong current passwords for this user or address.',
      body: StatusSchema,
      headers: {
        'Retry-After': { description: 'Seconds to wait.', schema: z.string().regex(/^\d+$/), required: true },
      },
    },
    503: statusResponses[503],
  },
});

const LoginRecordSchema = apiComponent(
  'LoginRecord',
  z.object({
    time: z.string().describe('When the attempt was answered (RFC 3339, milliseconds).'),
    grant: z.string().describe('password, refresh_token, authorization_code or upstream.'),
    provider: z.string().describe('local (a kapi password) or the identity provider that answered.'),
    client: z.string().describe('The OAuth client.'),
    sourceIP: z.string(),
    userAgent: z.string(),
    result: z.enum(['success', 'failure', 'limited', 'error']),
    reason: z.string().describe('Why, in a few words (the same reason the audit log gives).'),
    via: z.string().optional().describe('login_page when the password was typed on kapi’s login page.'),
  }),
);

const LoginRecordListSchema = apiComponent(
  'LoginRecordList',
  z.object({
    items: z.array(LoginRecordSchema).describe('Newest first.'),
    totalItems: z.int().min(0).describe('Records kept for the user (the items before `limit`).'),
  }),
);

export const listLoginRecords = defineOperation({
  operationId: 'listLoginRecords',
  method: 'get',
  path: `${IAM_BASE}/users/{name}/loginrecords`,
  tags: ['iam'],
  summary: 'A user’s login records: every password, refresh and sign-in attempt, success or not',
  description:
    'Readable by the user and by callers the cluster’s RBAC allows `get` on `users/loginrecords` in `iam.kapi.io`. ' +
    'Kept loginRecords.maxAge (7 days) and at most loginRecords.maxPerUser (100) per user, as the ' +
    'ClusterConfiguration says. Attempts of the last 2 seconds may show only on the replica that answered them.',
  security: 'bearer',
  pathParameters: userName,
  query: z.object({
    limit: z.int().min(1).max(1000).optional().describe('The newest this many only.'),
  }),
  responses: {
    200: { description: 'The records.', body: LoginRecordListSchema },
    400: { description: 'limit is not a whole number from 1 to 1000.', body: StatusSchema },
    401: statusResponses[401],
    403: { description: 'Another user’s records, without the right to get users/loginrecords.', body: StatusSchema },
    404: { description: 'No such User (asked by an administrator).', body: StatusSchema },
    503: statusResponses[503],
  },
});

/** KubeSphere 3.4's routes of the same (its console's): the same password change, under v1alpha2. */
export const IAM_V1ALPHA2_BASE = '/kapis/iam.kapi.io/v1alpha2';

export const changeUserPasswordV1alpha2 = defineOperation({
  ...changeUserPassword,
  operationId: 'changeUserPasswordV1alpha2',
  path: `${IAM_V1ALPHA2_BASE}/users/{name}/password`,
  summary: 'Change a user’s password (KubeSphere 3.4’s route; the same as v1beta1’s)',
});

const KubeSphereLoginRecordSchema = apiComponent(
  'KubeSphereLoginRecord',
  z.object({
    apiVersion: z.literal('iam.kapi.io/v1alpha2'),
    kind: z.literal('LoginRecord'),
    metadata: z.object({
      name: z.string().describe('`<user>-<milliseconds>`: a name for the table’s rows, not a stored object.'),
      creationTimestamp: z.string().describe('When the attempt was answered (RFC 3339).'),
      labels: z.record(z.string(), z.string()),
    }),
    spec: z.object({
      type: z.literal('Token'),
      provider: z.string(),
      sourceIP: z.string(),
      userAgent: z.string(),
      success: z.boolean(),
      reason: z.string(),
    }),
  }),
);

export const listUserLoginRecords = defineOperation({
  ...listLoginRecords,
  operationId: 'listUserLoginRecords',
  path: `${IAM_V1ALPHA2_BASE}/users/{name}/loginrecords`,
  summary: 'A user’s login records in KubeSphere 3.4’s shape (its console’s login history), paged',
  query: z.object({
    limit: z.int().min(-1).max(1000).optional().describe('Records per page; -1 or absent: all.'),
    page: z.int().min(1).optional().describe('The page, from 1 (with limit).'),
  }),
  responses: {
    ...listLoginRecords.responses,
    200: {
      description: 'The records, newest first.',
      body: z.object({ items: z.array(KubeSphereLoginRecordSchema), totalItems: z.int().min(0) }),
    },
    400: { description: 'limit or page is not a whole number in range.', body: StatusSchema },
  },
});

export const accountOperations = [
  changeUserPassword,
  listLoginRecords,
  changeUserPasswordV1alpha2,
  listUserLoginRecords,
] as const;
