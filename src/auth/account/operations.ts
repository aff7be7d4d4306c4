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

export const accountOperations = [changeUserPassword] as const;
