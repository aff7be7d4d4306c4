import { STATUS_CODES } from 'node:http';
import { PathMemo } from './path-memo.js';

/**
 * Label values of the request metrics, each from a bounded set whatever clients send: a series is never made from a
 * raw path, an invented resource or an odd method, so no request (authenticated or not) can grow `/metrics`.
 */

/** A label for whatever is not in the set. */
export const OTHER = 'other';

const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The methods Kubernetes clients and browsers use; Node accepts about forty more (PROPFIND, MKCOL…), all `other`. */
export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : OTHER;
}

/** A status code Node knows by name (about sixty); anything else kube-apiserver or a proxied service sent is `other`. */
export function codeLabel(code: number): string {
  return CODE_LABELS.get(code) ?? OTHER;
}

/** Each known code's label, made once (not a new string per request). */
const CODE_LABELS: ReadonlyMap<number, string> = new Map(Object.keys(STATUS_CODES).map((code) => [Number(code), code]));

interface TrieNode {
  readonly literals: Map<string, TrieNode>;
  parameter?: TrieNode;
  template?: string;
}

const node = (): TrieNode => ({ literals: new Map() });

/** `/a/b/` → ['a', 'b']: Express routes a trailing slash as the path without it. */
function segmentsOf(path: string): string[] {
  const segments = path.split('/').slice(1);
  if (segments.length > 0 && segments[segments.length - 1] === '') segments.pop();
  return segments;
}

/**
 * kapi's own routes by their template (`/kapis/resources.kapi.io/v1alpha3/nodes/{name}`): a path takes the label of
 * the template it matches, literal segments before `{parameters}`; a path no template matches has none.
 */
export class RouteTable {
  private readonly root = node();

  constructor(templates: Iterable<string>) {
    for (const template of templates) {
      let at = this.root;
      for (const segment of segmentsOf(template)) {
        if (/^\{[^}]+\}$/.test(segment)) at = at.parameter ??= node();
        else {
          let next = at.literals.get(segment);
          if (!next) at.literals.set(segment, (next = node()));
          at = next;
        }
      }
      at.template ??= template;
    }
  }

  match(path: string): string | undefined {
    return matchFrom(this.root, segmentsOf(path), 0);
  }
}

function matchFrom(at: TrieNode, segments: readonly string[], i: number): string | undefined {
  if (i === segments.length) return at.template;
  const segment = segments[i]!;
  const literal = at.literals.get(segment);
  const found = literal && matchFrom(literal, segments, i + 1);
  if (found !== undefined) return found;
  return at.parameter && segment !== '' ? matchFrom(at.parameter, segments, i + 1) : undefined;
}

/** `namespaces/{name}/{x}` where x is a subresource of the Namespace, not a resource inside it (as kube's RequestInfo). */
const NAMESPACE_SUBRESOURCES: ReadonlySet<string> = new Set(['status', 'finalize']);

/**
 * The route of a forwarded path as kube-apiserver's own metrics see it: `/api/v1/pods`, `/api/v1/pods/log`,
 * `/apis/apps/v1/deployments/scale` (group, version, resource, subresource; never a namespace or a name); discovery
 * is `/api` or `/apis`, and `/version` and `/openapi` are themselves. Undefined for anything else.
 */
export function forwardedRoute(path: string): string | undefined {
  const parts = segmentsOf(path);
  const root = parts[0];
  if (root === 'version' || root === 'openapi') return `/${root}`;
  let rest: string[];
  let prefix: string;
  if (root === 'api') {
    if (parts.length <= 2) return '/api';
    prefix = `/api/${parts[1]}`;
    rest = parts.slice(2);
  } else if (root === 'apis') {
    if (parts.length <= 3) return '/apis';
    prefix = `/apis/${parts[1]}/${parts[2]}`;
    rest = parts.slice(3);
  } else return undefined;
  // The legacy `/watch/…` prefix reads the same resource.
  if (rest[0] === 'watch') rest = rest.slice(1);
  if (rest[0] === 'namespaces' && rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
  const [resource, , subresource] = rest;
  if (!resource) return prefix.startsWith('/api/') ? '/api' : '/apis';
  return subresource ? `${prefix}/${resource}/${subresource}` : `${prefix}/${resource}`;
}

/** Resource routes labelled at most (built-in kinds, their subresources and a cluster's CRDs fit well below it). */
export const MAX_RESOURCE_ROUTES = 500;

/**
 * The `route` label of every request: kapi's own routes by template, forwarded requests by group, version, resource
 * and subresource. A resource route is labelled once kube-apiserver has served it (a 2xx answer): a resource a
 * client invents gets a 404 (or a 403), never a series of its own; an unauthenticated request, which never reaches
 * kube-apiserver, takes the label of a route already served. At most `maxResourceRoutes` are learned; everything
 * else is `other`.
 */
export class RouteLabels {
  private readonly table: RouteTable;
  private readonly served = new Set<string>();
  /** Paths seen lately and their forwarded route (or none). */
  private readonly routeOfPath = new PathMemo((path) => forwardedRoute(path) ?? null);

  constructor(
    templates: Iterable<string>,
    private readonly maxResourceRoutes = MAX_RESOURCE_ROUTES,
  ) {
    this.table = new RouteTable(templates);
  }

  label(path: string, code: number): string {
    const route = this.routeOfPath.get(path) ?? undefined;
    if (route === undefined) return this.table.match(path) ?? OTHER;
    if (route === '/api' || route === '/apis' || route === '/version' || route === '/openapi') return route;
    if (this.served.has(route)) return route;
    if (code >= 200 && code < 300 && this.served.size < this.maxResourceRoutes) {
      this.served.add(route);
      return route;
    }
    return OTHER;
  }
}
