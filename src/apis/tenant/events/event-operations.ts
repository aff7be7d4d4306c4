import { z } from 'zod';
import { defineOperation } from '../../../openapi/operation.js';
import { StatusSchema, apiComponent, statusResponses } from '../../../openapi/schemas.js';
import { TENANT_V1ALPHA2_BASE } from '../operations.js';
import { EventQuerySchema } from './event-query.js';

const EventSchema = apiComponent(
  'EventRecord',
  z
    .looseObject({
      kind: z.literal('Event'),
      apiVersion: z.literal('v1'),
      metadata: z.looseObject({ name: z.string(), namespace: z.string() }),
      involvedObject: z.looseObject({}),
      reason: z.string().optional(),
      message: z.string().optional(),
      type: z.string().optional(),
      lastTimestamp: z.string().nullable().optional(),
    })
    .describe('An event as the cluster stores it (core/v1 Event), without its managedFields.'),
);

export const EventSearchResultSchema = apiComponent(
  'EventSearchResult',
  z
    .object({
      query: z
        .object({ total: z.int(), records: z.array(EventSchema) })
        .optional()
        .describe('operation=query: the matching events and how many there are.'),
      statistics: z
        .object({
          resources: z.int().describe('Distinct involved objects.'),
          events: z.int().describe('Matching events.'),
        })
        .optional()
        .describe('operation=statistics.'),
      histogram: z
        .object({
          total: z.int(),
          buckets: z.array(z.object({ time: z.int().describe('Bucket start, epoch ms.'), count: z.int() })),
        })
        .optional()
        .describe('operation=histogram: counts per interval, oldest first, from the first match to the last.'),
    })
    .describe('Only the key of the operation asked is present (KubeSphere 3.4.1’s shapes).'),
);

export const searchEvents = defineOperation({
  operationId: 'searchEvents',
  method: 'get',
  path: `${TENANT_V1ALPHA2_BASE}/events`,
  tags: ['tenant'],
  summary: 'Search the cluster’s events (the console’s Event Search)',
  description:
    'KubeSphere 3.4.1’s event search, answered from the cluster’s own events (watched by kapi; no search engine). ' +
    'A caller sees the events of the namespaces it may `list events` in (a SubjectAccessReview each, or one ' +
    'cluster-wide), narrowed by the workspace and namespace parameters (a namespace outside workspaces only when ' +
    'no workspace is asked for); an event older than its namespace (of an earlier namespace of the name) is not ' +
    'shown. One who may list events nowhere gets an empty answer, as from KubeSphere. One who may not list events ' +
    'cluster-wide searches at most 500 namespaces at once (their reviews), else a 400 asking to name them.',
  security: 'bearer',
  query: EventQuerySchema,
  responses: {
    200: { description: 'The answer of the operation.', body: EventSearchResultSchema },
    400: {
      description:
        'A parameter’s value is not one it takes, the time range is reversed, or (for one who may not list events ' +
        'cluster-wide) the query covers more than 500 namespaces.',
      body: StatusSchema,
    },
    401: statusResponses[401],
    503: {
      description: 'The events or namespaces have not been read yet, or the rights cannot be checked; try again.',
      body: StatusSchema,
    },
  },
});

export const eventOperations = [searchEvents] as const;
