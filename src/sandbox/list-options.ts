import { parseObjectFilter, type ObjectFilter } from './object-filter.js';
import type { ResourceType } from './resource-types.js';
import { badInteger, badRequest, invalid, StatusError, type FieldError } from './status.js';

/**
 * The query parameters of list and watch requests (metav1.ListOptions), parsed and validated as kube-apiserver does
 * it (ValidateListOptions): bad syntax is 400, a forbidden combination is a 422 on `ListOptions.meta.k8s.io`.
 */
export interface ListOptions {
  watch: boolean;
  /** Raw, as given: '' (most recent), '0' (any) or a number. */
  resourceVersion: string;
  resourceVersionMatch: '' | 'Exact' | 'NotOlderThan';
  /** 0: no limit. */
  limit: number;
  continueToken: string;
  filter: ObjectFilter | undefined;
  /** The raw field selector, kept for authorization (a pinned metadata.name). */
  fieldSelector: string;
  allowWatchBookmarks: boolean;
  sendInitialEvents: boolean | undefined;
  /** Seconds; undefined: the server's default. */
  timeoutSeconds: number | undefined;
}

/**
 * A boolean query parameter as kube's query conversion reads it (Convert_Slice_string_To_bool): "0", "" and "false" in
 * any case are false, anything else is true, never an error.
 */
export function parseBool(value: string | null): boolean | undefined {
  if (value === null) return undefined;
  return !(value === '0' || value === '' || value.toLowerCase() === 'false');
}

/** An integer query parameter; what Go's strconv.ParseInt refuses is its 400. */
export function parseInteger(value: string | null): number | undefined {
  if (value === null || value === '') return undefined;
  if (!/^[+-]?\d+$/.test(value)) throw badInteger(value);
  return Number(value);
}

/** strconv.ParseUint's refusal of a resourceVersion, as kube's storage words it. */
function resourceVersionError(value: string): string {
  return `resourceVersion: Invalid value: ${JSON.stringify(value)}: strconv.ParseUint: parsing ${JSON.stringify(value)}: invalid syntax`;
}

export function parseResourceVersion(value: string): number {
  if (!/^\d+$/.test(value)) throw badRequest(`invalid resource version: ${resourceVersionError(value)}`);
  return Number(value);
}

export function parseListOptions(type: ResourceType, query: URLSearchParams, forceWatch = false): ListOptions {
  const watch = forceWatch || (parseBool(query.get('watch')) ?? false);
  const resourceVersion = query.get('resourceVersion') ?? '';
  const match = query.get('resourceVersionMatch') ?? '';
  const continueToken = query.get('continue') ?? '';
  const sendInitialEvents = parseBool(query.get('sendInitialEvents'));
  const allowWatchBookmarks = parseBool(query.get('allowWatchBookmarks')) ?? false;
  const limit = Math.max(0, parseInteger(query.get('limit')) ?? 0);
  const timeoutSeconds = parseInteger(query.get('timeoutSeconds'));

  const errors = watch
    ? watchOptionErrors(match, continueToken, sendInitialEvents, allowWatchBookmarks)
    : listOptionErrors(match, resourceVersion, continueToken, sendInitialEvents);
  if (errors.length > 0) throw invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', errors);
  if (!watch && continueToken && resourceVersion !== '' && resourceVersion !== '0') {
    throw badRequest('specifying resource version is not allowed when using continue');
  }
  if (resourceVersion !== '' && resourceVersion !== '0' && !/^\d+$/.test(resourceVersion)) {
    // A paged list reads etcd, which refuses it as a bad request; a watch or a whole list is served by the watch
    // cache, whose parse error kube answers as a 500 without a reason.
    if (!watch && limit > 0) parseResourceVersion(resourceVersion);
    throw new StatusError(500, '', resourceVersionError(resourceVersion));
  }

  const fieldSelector = query.get('fieldSelector') ?? '';
  return {
    watch,
    resourceVersion,
    resourceVersionMatch: match as ListOptions['resourceVersionMatch'],
    limit,
    continueToken,
    filter: parseObjectFilter(type, query.get('labelSelector') ?? undefined, fieldSelector || undefined),
    fieldSelector,
    allowWatchBookmarks,
    sendInitialEvents,
    timeoutSeconds: timeoutSeconds !== undefined && timeoutSeconds > 0 ? timeoutSeconds : undefined,
  };
}

function listOptionErrors(
  match: string,
  resourceVersion: string,
  continueToken: string,
  sendInitialEvents: boolean | undefined,
): FieldError[] {
  const errors: FieldError[] = [];
  if (match) {
    if (!resourceVersion) {
      errors.push({
        type: 'Forbidden',
        field: 'resourceVersionMatch',
        detail: 'resourceVersionMatch is forbidden unless resourceVersion is provided',
      });
    }
    if (continueToken) {
      errors.push({
        type: 'Forbidden',
        field: 'resourceVersionMatch',
        detail: 'resourceVersionMatch is forbidden when continue is provided',
      });
    }
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      errors.push({
        type: 'NotSupported',
        field: 'resourceVersionMatch',
        value: match,
        detail: 'supported values: "Exact", "NotOlderThan", ""',
      });
    }
    if (match === 'Exact' && resourceVersion === '0') {
      errors.push({
        type: 'Forbidden',
        field: 'resourceVersionMatch',
        detail: 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
      });
    }
  }
  if (sendInitialEvents !== undefined) {
    errors.push({ type: 'Forbidden', field: 'sendInitialEvents', detail: 'sendInitialEvents is forbidden for list' });
  }
  return errors;
}

function watchOptionErrors(
  match: string,
  continueToken: string,
  sendInitialEvents: boolean | undefined,
  allowWatchBookmarks: boolean,
): FieldError[] {
  const errors: FieldError[] = [];
  if (sendInitialEvents !== undefined) {
    if (match !== 'NotOlderThan') {
      errors.push({
        type: 'Forbidden',
        field: 'resourceVersionMatch',
        detail: 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      });
    }
    if (sendInitialEvents && !allowWatchBookmarks) {
      errors.push({
        type: 'Forbidden',
        field: 'allowWatchBookmarks',
        detail: 'sendInitialEvents requires setting allowWatchBookmarks to true',
      });
    }
  }
  if (match) {
    if (sendInitialEvents === undefined) {
      errors.push({
        type: 'Forbidden',
        field: 'resourceVersionMatch',
        detail: 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
      });
    }
    if (match !== 'NotOlderThan') {
      errors.push({
        type: 'NotSupported',
        field: 'resourceVersionMatch',
        value: match,
        detail: 'supported values: "NotOlderThan"',
      });
    }
    if (continueToken) {
      errors.push({
        type: 'Forbidden',
        field: 'resourceVersionMatch',
        detail: 'resourceVersionMatch is forbidden when continue is provided',
      });
    }
  }
  return errors;
}
