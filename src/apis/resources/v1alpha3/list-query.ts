import { LabelSelectorError, parseLabelSelector, type LabelSelector } from '../../../kube/label-selector.js';
import { InvalidParameterError } from '../../../server/errors.js';
import { NODE_STATUSES, type NodeStatus } from './node-status.js';

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
 * Reads the query string Express parsed. Unknown parameters are ignored (KubeSphere 3.x empties the result instead);
 * an empty value means the parameter was not given, as in KubeSphere; a bad value is an `InvalidParameterError`
 * naming the parameter, where KubeSphere would silently fall back to a default.
 */
export function parseListQuery(query: Readonly<Record<string, unknown>>): NodeListQuery {
  const value = (parameter: string): string | undefined => singleValue(query, parameter);

  const selectors: LabelSelector[] = [];
  const selectorTexts: string[] = [];
  for (const parameter of ['labelSelector', 'label']) {
    const text = value(parameter);
    if (text === undefined) continue;
    selectors.push(selectorParameter(parameter, text));
    selectorTexts.push(text);
  }

  const name = value('name');
  const namesText = value('names');
  const names = namesText === undefined ? undefined : new Set(namesText.split(',').filter((n) => n !== ''));
  const uid = value('uid');
  const status = value('status');
  if (status !== undefined && !(NODE_STATUSES as readonly string[]).includes(status)) {
    throw new InvalidParameterError('status', `"${status}" is not one of ${NODE_STATUSES.join(', ')}`);
  }

  const nameSet = names !== undefined && names.size > 0 ? names : undefined;
  const filtered =
    name !== undefined || nameSet || selectorTexts.length > 0 || status !== undefined || uid !== undefined;
  const filterKey = filtered ? JSON.stringify([name, nameSet && [...nameSet].sort(), selectorTexts, status, uid]) : '';

  return {
    page: integerParameter('page', value('page'), 1) ?? 1,
    limit: integerParameter('limit', value('limit'), 0),
    sortBy: sortParameter(value('sortBy')),
    ascending: booleanParameter('ascending', value('ascending')),
    selectors,
    filterKey,
    ...(name !== undefined && { name }),
    ...(nameSet && { names: nameSet }),
    ...(uid !== undefined && { uid }),
    ...(status !== undefined && { status: status as NodeStatus }),
  };
}

/**
 * One text value, or `undefined` when absent or empty. Express gives an array for a repeated parameter (accepted
 * when every copy is the same) and an object for `p[x]=` forms (never valid here).
 */
function singleValue(query: Readonly<Record<string, unknown>>, parameter: string): string | undefined {
  if (!Object.hasOwn(query, parameter)) return undefined;
  const raw = query[parameter];
  if (raw === undefined) return undefined;
  if (typeof raw === 'string') return raw === '' ? undefined : raw;
  if (Array.isArray(raw) && raw.length > 0 && raw.every((v) => typeof v === 'string')) {
    if (raw.some((v) => v !== raw[0]))
      throw new InvalidParameterError(parameter, 'given more than once with different values');
    return raw[0] === '' ? undefined : (raw[0] as string);
  }
  throw new InvalidParameterError(parameter, 'must be a single text value');
}

function integerParameter(parameter: string, text: string | undefined, minimum: number): number | undefined {
  if (text === undefined) return undefined;
  const number = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(number) || number < minimum) {
    throw new InvalidParameterError(parameter, `"${text}" is not an integer of at least ${minimum}`);
  }
  return number;
}

/**
 * The spellings Go's `strconv.ParseBool` accepts: KubeSphere reads `ascending` with it, so its clients may send any
 * of them.
 */
export const GO_BOOLEAN_VALUES: Readonly<Record<string, boolean>> = Object.freeze({
  1: true,
  t: true,
  T: true,
  TRUE: true,
  true: true,
  True: true,
  0: false,
  f: false,
  F: false,
  FALSE: false,
  false: false,
  False: false,
});

function booleanParameter(parameter: string, text: string | undefined): boolean {
  if (text === undefined) return false;
  const value = Object.hasOwn(GO_BOOLEAN_VALUES, text) ? GO_BOOLEAN_VALUES[text] : undefined;
  if (value === undefined) throw new InvalidParameterError(parameter, `"${text}" is not a boolean (true or false)`);
  return value;
}

function sortParameter(text: string | undefined): SortField {
  if (text === undefined) return 'creationTimestamp';
  const field = Object.hasOwn(SORT_FIELDS, text) ? SORT_FIELDS[text] : undefined;
  if (!field)
    throw new InvalidParameterError('sortBy', `"${text}" is not one of ${Object.keys(SORT_FIELDS).join(', ')}`);
  return field;
}

function selectorParameter(parameter: string, text: string): LabelSelector {
  try {
    return parseLabelSelector(text);
  } catch (err) {
    if (err instanceof LabelSelectorError) throw new InvalidParameterError(parameter, err.message);
    throw err;
  }
}
