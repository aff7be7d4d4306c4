import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { SandboxWebhooks } from './webhooks.js';
import type { Logger } from '../observability/logger.js';
import { authenticate, authorize, type Identity } from './access.js';
import { auditIdOf, type AuditTrail } from './audit.js';
import type { RequestMetrics } from './request-metrics.js';
import { versionInfo, type Discovery } from './discovery.js';
import { Exchange, rawErrorResponse } from './exchange.js';
import { ANONYMOUS, type SandboxUser, type TokenAuthenticator } from './identity.js';
import { serveLog } from './log-stream.js';
import type { Authorizer } from './policy.js';
import { chosenContainer, containerLog, parseLogOptions, type LogHistory } from './pod-logs.js';
import type { OpenApiDocuments } from './openapi.js';
import type { RegistryStore } from './registry-store.js';
import { serveResource } from './resource-handler.js';
import type { KubeObject, ResourceRegistry, ResourceType } from './resource-types.js';
import { parseRequestInfo, type RequestInfo } from './request-info.js';
import {
  selfSubjectAccessReview,
  selfSubjectReview,
  selfSubjectRulesReview,
  subjectAccessReview,
  type ReviewContext,
} from './reviews.js';
import {
  badRequest,
  conflict,
  fieldErrorsMessage,
  internalError,
  methodNotAllowed,
  notFound,
  pageNotFound,
  pathNotFound,
  StatusError,
  type FieldError,
} from './status.js';
import { readObjectBody } from './request-body.js';
import type { ObjectStore } from './store.js';
import { parseStored } from './stored-object.js';
import type { UpgradeEcho, UpgradeKind } from './upgrade.js';
import { BareRefusal, isWebSocketRequest, type WebSocketWatches } from './websocket-watch.js';
import { serveWatchTo, websocketWatchSink } from './watch-stream.js';
import { watchOptions } from './resource-handler.js';
import type { WatchHub } from './watch-hub.js';

/** Everything the routes need; built once by startSandbox. */
export interface RouterDeps {
  registry: ResourceRegistry;
  store: ObjectStore;
  objects: RegistryStore;
  hub: WatchHub;
  tokens: TokenAuthenticator;
  /** The one decision function: default policy, then RBAC objects. */
  authorizer: Authorizer;
  audit: AuditTrail;
  /** apiserver_request_total, served at /metrics. */
  requestMetrics: RequestMetrics;
  discovery: Discovery;
  openapi: OpenApiDocuments;
  upgrades: UpgradeEcho;
  websocketWatches: WebSocketWatches;
  logs: { sandboxStartMs: number; intervalMs: number; follows: Set<() => void>; history?: LogHistory };
  logger?: Logger;
  /** The validating webhooks stored, called for the creations they match. */
  webhooks?: SandboxWebhooks;
  /** How long a connection closed after a refused body stays readable (Go's rstAvoidanceDelay, 500 ms). */
  rstAvoidanceDelayMs?: number;
}

const REVIEW_GROUPS = new Set(['authorization.k8s.io', 'authentication.k8s.io']);
const UPGRADE_KINDS = new Set<string>(['exec', 'attach', 'portforward']);
const HEALTH_PATHS = new Set(['/healthz', '/livez', '/readyz']);

function requestInfoOf(deps: RouterDeps, req: IncomingMessage, url: URL): RequestInfo {
  return parseRequestInfo(req.method ?? 'GET', url.pathname, url.searchParams, (group, resource) =>
    deps.registry.byGroupResource(group, resource),
  );
}

function auditor(deps: RouterDeps, info: RequestInfo, path: string, auditId: string) {
  const state: { identity: Identity } = { identity: { user: ANONYMOUS } };
  const started = performance.now();
  const record = (code: number): void => {
    const { user, impersonatedBy } = state.identity;
    deps.audit.record({
      time: new Date().toISOString(),
      auditId,
      user: user.username,
      groups: [...user.groups],
      ...(impersonatedBy ? { impersonatedBy: impersonatedBy.username } : {}),
      verb: info.verb,
      path,
      code,
    });
    deps.requestMetrics.count(info, code, (performance.now() - started) / 1000);
  };
  return { state, record };
}

function toStatusError(deps: RouterDeps, err: unknown, path: string): StatusError {
  if (err instanceof StatusError) return err;
  deps.logger?.error('sandbox request failed', {
    path,
    error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
  });
  return internalError('an unexpected error occurred in the sandbox; see its log');
}

/** The request listener: authn → impersonation → authz → route, every answer audited. */
export function requestHandler(deps: RouterDeps) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const info = requestInfoOf(deps, req, url);
    const auditId = auditIdOf(req.headers);
    const audit = auditor(deps, info, url.pathname, auditId);
    const x = new Exchange(req, res, url, audit.record, auditId, deps.rstAvoidanceDelayMs);
    res.on('error', () => res.destroy());
    const run = async (): Promise<void> => {
      audit.state.identity = authenticate(req, deps.tokens, deps.authorizer);
      authorize(audit.state.identity.user, info, deps.authorizer);
      await route(deps, x, info, audit.state.identity.user);
    };
    run().catch((err: unknown) => x.sendError(toStatusError(deps, err, url.pathname)));
  };
}

async function route(deps: RouterDeps, x: Exchange, info: RequestInfo, user: SandboxUser): Promise<void> {
  if (!info.isResourceRequest) {
    serveNonResource(deps, x, info);
    return;
  }
  if (REVIEW_GROUPS.has(info.apiGroup)) {
    await serveReview(deps, x, info, user);
    return;
  }
  const type = deps.registry.find(info.apiGroup, info.apiVersion, info.resource);
  // A served group version without this resource is kube's NotFound Status; an unknown group or version, Go's 404 page.
  if (!type) throw deps.discovery.resourceList(info.apiGroup, info.apiVersion) ? pathNotFound() : pageNotFound();
  let namespace = info.namespace;
  if (!type.namespaced) {
    if (namespace && !(type.group === '' && type.resource === 'namespaces')) throw pathNotFound();
    namespace = '';
  } else if (!namespace && info.name) {
    throw pathNotFound();
  }
  if (type.group === '' && type.resource === 'pods' && info.subresource === 'log') {
    if (info.verb !== 'get') throw methodNotAllowed();
    const pod = parseStored(type, deps.objects.get(type, namespace, info.name));
    const options = parseLogOptions(x.url.searchParams, info.name);
    chosenContainer(pod, options.container);
    // kube-apiserver has no kubelet to ask for a pod on no node: an empty answer.
    if (!hostOf(deps, pod)) {
      x.sendNoContent();
      return;
    }
    const log = containerLog(pod, options, deps.logs.sandboxStartMs, deps.logs.intervalMs, deps.logs.history);
    serveLog(x, log, options, Date.now, deps.logs.follows);
    return;
  }
  if (type.group === '' && type.resource === 'pods' && info.subresource === 'binding') {
    await bindPod(deps, x, info, type, namespace);
    return;
  }
  if (UPGRADE_KINDS.has(info.subresource) && type.group === '' && type.resource === 'pods') {
    streamTarget(deps, parseStored(type, deps.objects.get(type, namespace, info.name)), info.subresource, x.url);
    throw badRequest('Upgrade request required');
  }
  await serveResource(x, deps, type, info, namespace, user);
}

/**
 * `pods/{name}/binding`, a scheduler's write, as kube's BindingREST: the Binding's name is the URL's, its target a Node
 * by name; the pod's node is set once (409 when it has one or is being deleted), with its PodScheduled condition;
 * a dry run changes nothing. Answered with a Success Status.
 */
async function bindPod(deps: RouterDeps, x: Exchange, info: RequestInfo, type: ResourceType, namespace: string) {
  if (info.verb !== 'create') throw methodNotAllowed();
  const body = (await readObjectBody(x, 'Binding')) as {
    metadata?: { name?: string };
    target?: { kind?: string; name?: string };
  };
  if (body?.metadata?.name !== info.name) throw badRequest('name in URL does not match name in Binding object');
  const errors: FieldError[] = [];
  const kind = body?.target?.kind ?? '';
  if (kind !== '' && kind !== 'Node')
    errors.push({
      type: 'NotSupported',
      field: 'target.kind',
      value: kind,
      detail: 'supported values: "Node", "<empty>"',
    });
  const node = body?.target?.name ?? '';
  if (!node) errors.push({ type: 'Required', field: 'target.name', detail: '' });
  // kube's BindingREST returns the aggregate as it is: a 500 with no reason
  if (errors.length) throw new StatusError(500, '', fieldErrorsMessage(errors));
  const pod = parseStored(type, deps.objects.get(type, namespace, info.name));
  const why = (message: string) => conflict({ group: '', resource: 'pods/binding' }, info.name, message);
  if ((pod.metadata as { deletionTimestamp?: string }).deletionTimestamp)
    throw why(`pod ${info.name} is being deleted, cannot be assigned to a host`);
  const assigned = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
  if (assigned) throw why(`pod ${info.name} is already assigned to node "${assigned}"`);
  if (x.url.searchParams.get('dryRun') !== 'All') {
    const conditions = ((pod.status as { conditions?: { type?: string }[] } | undefined)?.conditions ?? []).filter(
      (condition) => condition.type !== 'PodScheduled',
    );
    const scheduled = {
      type: 'PodScheduled',
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    deps.objects.patch(
      type,
      namespace,
      info.name,
      'application/merge-patch+json',
      { spec: { nodeName: node } },
      '',
      {},
    );
    deps.objects.patch(
      type,
      namespace,
      info.name,
      'application/merge-patch+json',
      { status: { conditions: [...conditions, scheduled] } },
      'status',
      {},
    );
  }
  x.sendObject(201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
}

function serveNonResource(deps: RouterDeps, x: Exchange, info: RequestInfo): void {
  if (x.req.method !== 'GET' && x.req.method !== 'HEAD') throw methodNotAllowed();
  const path = info.path.replace(/\/+$/, '') || '/';
  if (HEALTH_PATHS.has(path)) {
    x.sendText(200, 'ok');
    return;
  }
  if (path === '/metrics') {
    x.sendText(200, deps.requestMetrics.text());
    return;
  }
  const parts = path.split('/').filter(Boolean);
  let document: unknown;
  if (path === '/version') document = versionInfo(deps.discovery.kubernetesMinor);
  else if (path === '/api') document = deps.discovery.apiVersions();
  else if (path === '/apis') document = deps.discovery.apiGroupList();
  else if (parts[0] === 'api' && parts.length === 2) document = deps.discovery.resourceList('', parts[1] as string);
  else if (parts[0] === 'apis' && parts.length === 2) document = deps.discovery.apiGroup(parts[1] as string);
  else if (parts[0] === 'apis' && parts.length === 3)
    document = deps.discovery.resourceList(parts[1] as string, parts[2] as string);
  else if (path === '/openapi/v3') document = deps.openapi.root();
  else if (parts[0] === 'openapi' && parts[1] === 'v3' && parts[2] === 'api' && parts.length === 4) {
    document = deps.openapi.document('', parts[3] as string);
  } else if (parts[0] === 'openapi' && parts[1] === 'v3' && parts[2] === 'apis' && parts.length === 5) {
    document = deps.openapi.document(parts[3] as string, parts[4] as string);
  }
  if (document === undefined) throw pageNotFound();
  if (path === '/version') {
    // kube-apiserver writes /version indented (responsewriters.WriteRawJSON), unlike the API's answers.
    x.sendJson(200, JSON.stringify(document, null, 2));
    return;
  }
  x.sendObject(200, document);
}

/**
 * The node a pod runs on, as kube-apiserver looks it up to reach its kubelet; undefined for a pod on no node. A
 * node that does not exist is kube's 404, which names the node as a pod (its connection-info getter's wording).
 */
function hostOf(deps: RouterDeps, pod: KubeObject): string | undefined {
  const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
  if (!nodeName) return undefined;
  const nodes = deps.registry.byGroupResource('', 'nodes');
  if (nodes && !deps.objects.has(nodes, '', nodeName)) throw notFound({ group: '', resource: 'pods' }, nodeName);
  return nodeName;
}

/** exec, attach and port-forward: the checks kube-apiserver makes before it calls the kubelet. */
function streamTarget(deps: RouterDeps, pod: KubeObject, subresource: string, url: URL): void {
  if (subresource !== 'portforward') chosenContainer(pod, url.searchParams.get('container') || undefined);
  if (!hostOf(deps, pod)) throw badRequest(`pod ${pod.metadata.name as string} does not have a host assigned`);
}

async function serveReview(deps: RouterDeps, x: Exchange, info: RequestInfo, user: SandboxUser): Promise<void> {
  const known = deps.discovery.resourceList(info.apiGroup, info.apiVersion) as
    { resources?: { name: string }[] } | undefined;
  if (!known?.resources?.some((r) => r.name === info.resource) || info.name) throw pathNotFound();
  if (info.verb !== 'create') throw methodNotAllowed();
  const body = (await readObjectBody(x)) ?? {};
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw badRequest('the request body must be a JSON object');
  const review = body as Record<string, unknown>;
  const ctx: ReviewContext = {
    caller: user,
    namespace: info.namespace,
    authorizer: deps.authorizer,
  };
  let answer: Record<string, unknown>;
  switch (info.resource) {
    case 'subjectaccessreviews':
      answer = subjectAccessReview(review, ctx, false);
      break;
    case 'localsubjectaccessreviews':
      answer = subjectAccessReview(review, ctx, true);
      break;
    case 'selfsubjectaccessreviews':
      answer = selfSubjectAccessReview(review, ctx);
      break;
    case 'selfsubjectrulesreviews':
      answer = selfSubjectRulesReview(review, ctx);
      break;
    default:
      answer = selfSubjectReview(review, user, info.apiVersion);
  }
  x.sendObject(201, answer);
}

/** The upgrade listener (exec, attach, portforward): the same front door, then the echo endpoints. */
export function upgradeHandler(deps: RouterDeps) {
  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const info = requestInfoOf(deps, req, url);
    const audit = auditor(deps, info, url.pathname, auditIdOf(req.headers));
    try {
      audit.state.identity = authenticate(req, deps.tokens, deps.authorizer);
      authorize(audit.state.identity.user, info, deps.authorizer);
      if (info.isResourceRequest && info.verb === 'watch' && isWebSocketRequest(req)) {
        serveWebSocketWatch(deps, req, socket, head, info, url);
        audit.record(101);
        return;
      }
      const pods = deps.registry.find(info.apiGroup, info.apiVersion, info.resource);
      if (
        !pods ||
        pods.group !== '' ||
        pods.resource !== 'pods' ||
        !UPGRADE_KINDS.has(info.subresource) ||
        !info.namespace
      ) {
        throw badRequest(`the server does not support upgrading ${url.pathname}`);
      }
      const pod: KubeObject = parseStored(pods, deps.objects.get(pods, info.namespace, info.name));
      streamTarget(deps, pod, info.subresource, url);
      const phase = String((pod.status as { phase?: string } | undefined)?.phase ?? 'Pending');
      if (phase === 'Succeeded' || phase === 'Failed') {
        throw badRequest(`cannot ${info.subresource} into a container in a completed pod; current phase is ${phase}`);
      }
      if (phase !== 'Running')
        throw badRequest(`unable to upgrade connection: pod ${info.name} is not running (phase ${phase})`);
      deps.upgrades.handle(req, socket, head, info.subresource as UpgradeKind, url.searchParams);
      audit.record(101);
    } catch (err) {
      if (err instanceof BareRefusal) {
        audit.record(err.code);
        socket.end(err.response);
        return;
      }
      const status = toStatusError(deps, err, url.pathname);
      audit.record(status.code);
      socket.end(rawErrorResponse(status));
    }
  };
}

/** A watch asked over WebSocket: the same checks and options as over HTTP, then each event a message. */
function serveWebSocketWatch(
  deps: RouterDeps,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  info: RequestInfo,
  url: URL,
): void {
  const type = deps.registry.find(info.apiGroup, info.apiVersion, info.resource);
  if (!type) throw deps.discovery.resourceList(info.apiGroup, info.apiVersion) ? pathNotFound() : pageNotFound();
  if (info.subresource) throw methodNotAllowed();
  let namespace = info.namespace;
  if (!type.namespaced) {
    if (namespace) throw pathNotFound();
    namespace = '';
  }
  const options = watchOptions(type, url.searchParams, info.name);
  deps.websocketWatches.accept(req, socket, head, (ws) =>
    serveWatchTo(websocketWatchSink(ws), deps, type, info.apiVersion, namespace, options),
  );
}
