import { z } from 'zod';
import { parseQuery } from '../../../openapi/query-parameters.js';
import { unixSeconds } from '../../../openapi/unix-seconds.js';
import { InvalidParameterError } from '../../../server/errors.js';
import { parseInterval, type Interval } from '../../logging/v1alpha2/interval.js';
import { IntervalSchema, MAX_RESULT_WINDOW, SORT_ORDERS, type SortOrder } from '../../logging/v1alpha2/operations.js';

/**
 * The event search's query (KubeSphere 3.4.1's `tenant.kubesphere.io/v1alpha2/events`, pkg/api/events/v1alpha1):
 * KubeSphere's parameter names and defaults; a bad value is a 400 naming the parameter (KubeSphere answered 500 or
 * fell back to a default). Unknown parameters are ignored; an empty value is absent.
 */
export const EVENT_OPERATIONS = ['query', 'statistics', 'histogram'] as const;
export type EventOperation = (typeof EVENT_OPERATIONS)[number];
export const DEFAULT_EVENT_SIZE = 10;

const terms = (what: string, how: string) =>
  z.array(z.string()).optional().describe(`Comma-separated ${what}; an event matches when ${how} any of them.`);

export const EventQuerySchema = z.object({
  operation: z
    .enum(EVENT_OPERATIONS)
    .default('query')
    .describe(
      'query: one page of matching events, newest first; statistics: how many events and involved objects match; ' +
        'histogram: event counts per `interval`.',
    ),
  workspace_filter: terms('workspaces', 'its namespace belongs to'),
  workspace_search: terms('texts', 'its namespace’s workspace contains'),
  involved_object_namespace_filter: terms('namespaces', 'its object is in'),
  involved_object_namespace_search: terms('texts', 'its object’s namespace contains'),
  involved_object_name_filter: terms('names', 'its object is named'),
  involved_object_name_search: terms('texts', 'its object’s name starts with'),
  involved_object_kind_filter: terms('kinds', 'its object is of (any case)'),
  reason_filter: terms('reasons', 'its reason is (any case)'),
  reason_search: terms('texts', 'its reason contains'),
  message_search: terms('texts', 'its message contains (any case)'),
  type_filter: z
    .string()
    .optional()
    .describe('Normal or Warning (any case): the events of that type (one value, as KubeSphere).'),
  interval: IntervalSchema,
  start_time: unixSeconds('Earliest `lastTimestamp`, inclusive. Absent or 0: no lower bound'),
  end_time: unixSeconds('Latest `lastTimestamp`, inclusive. Absent: now'),
  sort: z.enum(SORT_ORDERS).default('desc').describe('Order of a query’s events by `lastTimestamp`.'),
  from: z.int().min(0).max(MAX_RESULT_WINDOW).default(0).describe('Offset of the first event a query returns.'),
  size: z
    .int()
    .min(0)
    .max(MAX_RESULT_WINDOW)
    .default(DEFAULT_EVENT_SIZE)
    .describe(`Events a query returns; from + size at most ${MAX_RESULT_WINDOW}.`),
});

export interface EventFilter {
  readonly workspaces?: readonly string[];
  readonly workspaceSearch?: readonly string[];
  readonly namespaces?: readonly string[];
  readonly namespaceSearch?: readonly string[];
  readonly names?: readonly string[];
  readonly nameSearch?: readonly string[];
  /** Lower-cased. */
  readonly kinds?: readonly string[];
  /** Lower-cased. */
  readonly reasons?: readonly string[];
  readonly reasonSearch?: readonly string[];
  /** Lower-cased. */
  readonly messageSearch?: readonly string[];
  /** Lower-cased. */
  readonly type?: string;
  /** Epoch ms, inclusive; undefined: no lower bound. */
  readonly startMs: number | undefined;
  /** Epoch ms, inclusive. */
  readonly endMs: number;
}

export interface EventQuery extends EventFilter {
  readonly operation: EventOperation;
  readonly interval: Interval;
  readonly sort: SortOrder;
  readonly from: number;
  readonly size: number;
}

const listed = (items: readonly string[] | undefined, lower = false) =>
  items?.length ? (lower ? items.map((item) => item.toLowerCase()) : items) : undefined;

/** Reads the query string (`nowSeconds`: the default `end_time`). A reversed range is a 400. */
export function parseEventQuery(query: Readonly<Record<string, unknown>>, nowSeconds: number): EventQuery {
  const p = parseQuery(EventQuerySchema, query);
  const end = p.end_time ?? nowSeconds;
  // the console sends start_time=0 for "from the beginning"
  const start = p.start_time === 0 ? undefined : p.start_time;
  if (start !== undefined && start > end) {
    throw p.end_time === undefined
      ? new InvalidParameterError('start_time', `${start} is in the future (now is ${nowSeconds})`)
      : new InvalidParameterError('end_time', `${end} is before start_time ${start}`);
  }
  if (p.from + p.size > MAX_RESULT_WINDOW)
    throw new InvalidParameterError(
      'size',
      `from + size must be at most ${MAX_RESULT_WINDOW} (got ${p.from + p.size})`,
    );
  const type = p.type_filter?.trim().toLowerCase();
  if (type !== undefined && type !== '' && type !== 'normal' && type !== 'warning')
    throw new InvalidParameterError('type_filter', `"${p.type_filter}" is not an event type: Normal or Warning`);
  const filter: Record<string, unknown> = {
    workspaces: listed(p.workspace_filter),
    workspaceSearch: listed(p.workspace_search),
    namespaces: listed(p.involved_object_namespace_filter),
    namespaceSearch: listed(p.involved_object_namespace_search),
    names: listed(p.involved_object_name_filter),
    nameSearch: listed(p.involved_object_name_search),
    kinds: listed(p.involved_object_kind_filter, true),
    reasons: listed(p.reason_filter, true),
    reasonSearch: listed(p.reason_search),
    messageSearch: listed(p.message_search, true),
    type: type || undefined,
  };
  for (const key of Object.keys(filter)) if (filter[key] === undefined) delete filter[key];
  return {
    ...(filter as Partial<EventFilter>),
    operation: p.operation,
    interval: parseInterval(p.interval),
    sort: p.sort,
    from: p.from,
    size: p.size,
    startMs: start === undefined ? undefined : start * 1000,
    endMs: end * 1000 + 999,
  };
}
