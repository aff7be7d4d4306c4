import { z } from 'zod';

/**
 * The named schemas of kapi's documents (`components.schemas`). A response body is always one of these, so the
 * document names it once and refers to it; `apiComponent` registers a schema under its name.
 */
export const apiComponents = z.registry<{ id: string; description?: string }>();

export function apiComponent<S extends z.ZodType>(id: string, schema: S): S {
  apiComponents.add(schema, { id });
  return schema;
}

const StatusCause = z.object({
  reason: z.string().optional(),
  message: z.string().optional(),
  field: z.string().optional(),
});

/** kube-apiserver's error body (meta/v1 Status), the form of every error under /kapis, /api and /apis. */
export const StatusSchema = apiComponent(
  'Status',
  z
    .object({
      kind: z.literal('Status'),
      apiVersion: z.literal('v1'),
      metadata: z.object({}),
      status: z.literal('Failure'),
      message: z.string().describe('What went wrong, for people.'),
      reason: z.string().describe('Why, for machines: BadRequest, Unauthorized, Forbidden, NotFound, …'),
      details: z
        .object({
          name: z.string().optional(),
          kind: z.string().optional(),
          group: z.string().optional(),
          causes: z.array(StatusCause).optional().describe('For a bad parameter: its name in `field`.'),
          retryAfterSeconds: z.int().optional(),
        })
        .optional(),
      code: z.int().describe('The HTTP status code.'),
    })
    .describe('A Kubernetes meta/v1 Status: the body of every error answer outside /oauth.'),
);

/** The `Retry-After` header of a 429 (a limit on work in flight): whole seconds. */
export const RETRY_AFTER_HEADER = {
  description: 'Seconds to wait before trying again.',
  schema: z.string().regex(/^\d+$/),
  required: true,
};

/** The Status answers every bearer-authenticated operation can give, besides its own. */
export const statusResponses = {
  401: { description: 'No bearer token, or one that is invalid, expired or revoked.', body: StatusSchema },
  503: {
    description: 'The token or the caller’s rights cannot be checked right now (signing key not loaded, cluster down).',
    body: StatusSchema,
  },
} as const;
