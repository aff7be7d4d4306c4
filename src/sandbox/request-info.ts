import { parseBool } from './list-options.js';
import { parseFieldSelector, selectedName } from './object-filter.js';
import type { ResourceType } from './resource-types.js';

/**
 * What a request is about, derived from its method and path exactly as kube-apiserver's RequestInfoFactory does:
 * the verb (get, list, watch, create, update, patch, delete, deletecollection, or the lower-case HTTP method for
 * non-resource paths), API group and version, namespace, resource, subresource and name. Pure; authorization and
 * routing both read it.
 */
export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  verb: string;
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** resource/name/subresource/... relative to the namespace. */
  parts: string[];
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function methodVerb(method: string): string {
  switch (method) {
    case 'POST':
      return 'create';
    case 'GET':
    case 'HEAD':
      return 'get';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return '';
  }
}

/**
 * `fieldType` resolves the resource to its type, so a list pinned to one name by `fieldSelector=metadata.name=x` is
 * authorized as that name (as kube does); it may answer undefined for unknown resources.
 */
export function parseRequestInfo(
  method: string,
  path: string,
  query: URLSearchParams,
  fieldType?: (group: string, resource: string) => ResourceType | undefined,
): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
  };
  // Go's net/http hands kube-apiserver the path percent-decoded: `kapi%3Aname` names `kapi:name`
  let parts = path
    .split('/')
    .filter((p) => p.length > 0)
    .map(decodedSegment);
  if (parts.length < 3 || (parts[0] !== 'api' && parts[0] !== 'apis')) return info;
  const prefix = parts[0] as string;
  parts = parts.slice(1);
  let group = '';
  if (prefix === 'apis') {
    if (parts.length < 3) return info;
    group = parts[0] as string;
    parts = parts.slice(1);
  }
  info.apiPrefix = prefix;
  info.apiGroup = group;
  info.isResourceRequest = true;
  info.apiVersion = parts[0] as string;
  parts = parts.slice(1);

  if (parts[0] === 'watch' || parts[0] === 'proxy') {
    info.verb = parts[0];
    parts = parts.slice(1);
  } else {
    info.verb = methodVerb(method);
  }
  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      info.namespace = parts[1] as string;
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2] as string)) parts = parts.slice(2);
    }
  }
  info.parts = parts;
  if (parts.length >= 3 && info.verb !== 'proxy') info.subresource = parts[2] as string;
  if (parts.length >= 2) info.name = parts[1] as string;
  if (parts.length >= 1) info.resource = parts[0] as string;

  if (!info.name && info.verb === 'get') {
    let watch: boolean;
    try {
      watch = parseBool(query.get('watch')) ?? false;
    } catch {
      const raw = query.get('watch')?.toLowerCase();
      watch = raw !== 'false' && raw !== '0';
    }
    info.verb = watch ? 'watch' : 'list';
    const fieldSelector = query.get('fieldSelector');
    const type = fieldSelector ? fieldType?.(group, info.resource) : undefined;
    if (type && fieldSelector) {
      try {
        const name = selectedName(parseFieldSelector(type, fieldSelector));
        if (name && !name.includes('/') && !name.includes('%') && name !== '.' && name !== '..') info.name = name;
      } catch {
        // A bad selector is rejected later, with its own message; here it just pins no name.
      }
    }
  }
  if (!info.name && info.verb === 'delete') info.verb = 'deletecollection';
  return info;
}

/** A path segment percent-decoded; one that is not valid percent-encoding is taken as it is. */
function decodedSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
