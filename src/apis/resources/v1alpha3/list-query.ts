import type { LabelSelector } from '../../../kube/label-selector.js';
import { parseQuery } from '../../../openapi/query-parameters.js';
import type { NodeStatus } from './node-status.js';
import { NodeListQuerySchema } from './operations.js';

export type SortField = 'creationTimestamp' | 'name';

/** A node listing request, parsed and validated once (KubeSphere v1alpha3 parameters). */
export interface NodeListQuery {
  /** 1-based. */
  readonly page: number;
  /** Items per page; `undefined` means all of them, 0 means none (only the count). */
  readonly limit: number | undefined;
  readonly sortBy: SortField;
  readonly ascending: boolean;
  /** Substring of the name (or of the display-name annotation). */
  readonly name?: string;
  /** Exact names, any of them. */
  readonly names?: ReadonlySet<string>;
  /** From `label` and `labelSelector`; every one must match. */
  readonly selectors: readonly LabelSelector[];
  readonly status?: NodeStatus;
  readonly uid?: string;
  /** The filter's identity ('' when nothing is filtered): equal keys select the same nodes, for memoizing. */
  readonly filterKey: string;
}

/** `createTime` is KubeSphere's alias of `creationTimestamp`. */
const SORT_FIELDS: Readonly<Record<string, SortField>> = {
  creationTimestamp: 'creationTimestamp',
  createTime: 'creationTimestamp',
  name: 'name',
};

/**
 * Reads the query string Express parsed, through the listing operation's parameter schemas (the same ones the
 * platform document shows). Unknown parameters are ignored (KubeSphere 3.x empties the result instead); an empty
 * value means the parameter was not given, as in KubeSphere; a bad value is an `InvalidParameterError` naming the
 * parameter, where KubeSphere would silently fall back to a default.
 */
export function parseListQuery(query: Readonly<Record<string, unknown>>): NodeListQuery {
  const parameters = parseQuery(NodeListQuerySchema, query);
  const selectorParameters = [parameters.labelSelector, parameters.label].filter((p) => p !== undefined);
  const { uid, status } = parameters;
  const name = parameters.name ?? parameters.nameAndAlias;
  const nameSet = parameters.names && parameters.names.length > 0 ? new Set(parameters.names) : undefined;

  const selectorTexts = selectorParameters.map((p) => p.text);
  const filtered =
    name !== undefined || nameSet || selectorTexts.length > 0 || status !== undefined || uid !== undefined;
  const filterKey = filtered ? JSON.stringify([name, nameSet && [...nameSet].sort(), selectorTexts, status, uid]) : '';

  return {
    page: parameters.page,
    limit: parameters.limit,
    sortBy: SORT_FIELDS[parameters.sortBy] as SortField,
    ascending: parameters.ascending,
    selectors: selectorParameters.map((p) => p.selector),
    filterKey,
    ...(name !== undefined && { name }),
    ...(nameSet && { names: nameSet }),
    ...(uid !== undefined && { uid }),
    ...(status !== undefined && { status }),
  };
}
