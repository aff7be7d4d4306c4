import { LOGGING_BASE, LogQuerySchema } from './operations.js';

/** What the removed KubeSphere 3.2 routes named in their path, mapped to the `/logs` parameter that replaces it. */
export interface RemovedRouteParams {
  workspace?: string;
  namespace?: string;
  workload?: string;
  pod?: string;
  container?: string;
}

export const LOGS_PATH = `${LOGGING_BASE}/logs`;

/** The removed KubeSphere 3.2 routes (and the container level it also had), each answered with its replacement. */
export const REMOVED_ROUTES = [
  `${LOGGING_BASE}/workspaces/{workspace}`,
  `${LOGGING_BASE}/namespaces/{namespace}`,
  `${LOGGING_BASE}/namespaces/{namespace}/workloads/{workload}`,
  `${LOGGING_BASE}/namespaces/{namespace}/pods/{pod}`,
  `${LOGGING_BASE}/namespaces/{namespace}/pods/{pod}/containers/{container}`,
] as const;

/**
 * The `/logs` query that replaces a removed route, with the path's names as parameters and the caller's own known
 * query parameters kept. kapi has no workspaces: their namespaces must be named instead.
 */
export function replacementQuery(params: RemovedRouteParams, query: Readonly<Record<string, unknown>>): string {
  const search = new URLSearchParams();
  if (params.namespace !== undefined) search.set('namespaces', params.namespace);
  if (params.workload !== undefined) search.set('workloads', params.workload);
  if (params.pod !== undefined) search.set('pods', params.pod);
  if (params.container !== undefined) search.set('containers', params.container);
  for (const parameter of Object.keys(LogQuerySchema.shape)) {
    const value = query[parameter];
    if (typeof value === 'string' && value !== '' && !search.has(parameter)) search.set(parameter, value);
  }
  // A placeholder, left unencoded so that people can read it.
  const placeholder =
    params.workspace === undefined ? [] : [`namespaces=<the namespaces of workspace ${params.workspace}>`];
  if (placeholder.length) search.delete('namespaces');
  const text = [...placeholder, ...(search.size ? [search.toString()] : [])].join('&');
  return text ? `${LOGS_PATH}?${text}` : LOGS_PATH;
}

export function removedRouteMessage(params: RemovedRouteParams, query: Readonly<Record<string, unknown>>): string {
  const replacement = `GET ${replacementQuery(params, query)}`;
  if (params.workspace !== undefined) {
    return `this logging route was removed in KubeSphere 3.3, and kapi has no workspaces: use ${replacement}`;
  }
  return `this logging route was removed in KubeSphere 3.3: use ${replacement}`;
}
