import type { IncomingMessage } from 'node:http';
import type { RequestAuthenticator } from '../auth/authenticate.js';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { UserInfo } from '../auth/identity.js';
import type { Logger } from '../observability/logger.js';
import { clientRequestIdOf, newRequestId } from '../observability/request-id.js';
import {
  ApiError,
  BadRequestError,
  ForbiddenError,
  UnauthorizedError,
  credentialsRefused,
  statusBody,
  type KubeStatus,
} from '../server/errors.js';
import { backendFailure, isRedirect, redirectRefused, type Backend } from './backend.js';
import { forwardRequestHeaders, forwardResponseHeaders } from './forward-headers.js';
import { closeGracefully, responseHead, writeStatusAndClose } from './raw-http.js';
import { spliceSockets } from './splice.js';
import { hasRequestBody, isRelayedUpgrade, originFormTarget, streamKind } from './request-kind.js';
import { clientAddress, clientProto, type StreamGauge } from './client-info.js';
import { tunnelCut } from './stream-end.js';
import type { StreamRegistry } from './stream-registry.js';

export interface UpgradeRelayDeps {
  backend: Backend;
  credentials: () => Promise<Record<string, string>>;
  /** kube-apiserver answered 401: to kapi's credentials, never the caller's (see `credentialsRefused`). */
  credentialsRefused?: () => void;
  /** Resolves with the caller or rejects (an `ApiError`, normally 401) without side effects on the socket. */
  authenticateRequest: RequestAuthenticator;
  logger: Logger;
  streams?: StreamGauge;
  /** Where the session is registered from the moment it is sent on, so a revoked session or user cuts it. */
  registry?: StreamRegistry;
}

export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/**
 * Relays exec / attach / port-forward upgrades (WebSocket, including v5.channel.k8s.io, and SPDY/3.1): authenticate,
 * refuse impersonation, ask kube-apiserver as the caller, and splice the two sockets only on its 101. Any other answer
 * is written back and the connection closed, so nothing more the client sends on it is ever read.
 */
export function createUpgradeRelay(deps: UpgradeRelayDeps): UpgradeHandler {
  return (req, socket, head) => {
    // Nothing is read from the client until kube-apiserver switched protocols (pipe resumes it).
    socket.pause();
    socket.on('error', () => socket.destroy());
    relay(deps, req, socket, head).catch((error: unknown) => {
      deps.logger.error('upgrade relay failed', { path: pathOf(req.url), error: describe(error) });
      writeStatusAndClose(socket, statusBody(500, 'InternalError', 'an internal error occurred; see the server log'));
    });
  };
}

async function relay(deps: UpgradeRelayDeps, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  const started = process.hrtime.bigint();
  const requestId = newRequestId();
  let user: UserInfo | undefined;
  const audit = (status: number) =>
    deps.logger.info('request', {
      audit: true,
      requestId,
      clientRequestId: clientRequestIdOf(req.headers['x-request-id']),
      user: user?.username,
      verb: req.method,
      path: pathOf(req.url),
      status,
      upgrade: req.headers.upgrade,
      durationMs: Number(process.hrtime.bigint() - started) / 1e6,
      sourceIp: req.socket.remoteAddress,
    });
  const refuse = (status: KubeStatus) => {
    audit(status.code);
    writeStatusAndClose(socket, status, ['X-Request-Id', requestId]);
  };

  const url = req.url ?? '';
  const target = originFormTarget(url);
  if (!target || !isRelayedUpgrade(url, req.headers.upgrade)) {
    return refuse(
      new BadRequestError('kapi relays only WebSocket and SPDY/3.1 upgrades under /api and /apis').toStatus(),
    );
  }
  try {
    user = await deps.authenticateRequest(req);
  } catch (error) {
    if (error instanceof ApiError) return refuse(error.toStatus());
    throw error;
  }
  if (socket.destroyed) return;
  if (hasRequestBody(req.headers))
    return refuse(new BadRequestError('an upgrade request must not carry a body').toStatus());

  let credentials: Record<string, string>;
  try {
    credentials = await deps.credentials();
  } catch (error) {
    deps.logger.error('kapi credentials for kube-apiserver unavailable', { requestId, error: describe(error) });
    return refuse(statusBody(503, 'ServiceUnavailable', 'kapi’s credentials for kube-apiserver are unavailable'));
  }
  const headers = forwardRequestHeaders(req.rawHeaders, {
    user,
    credentials,
    backendHost: deps.backend.host,
    clientIp: clientAddress(req.socket),
    clientProto: clientProto(req.socket),
    requestId,
    upgrade: true,
  });
  if (!headers.ok) return refuse(new ForbiddenError(headers.message).toStatus());
  if (socket.destroyed) return;

  const upstream = deps.backend.send({
    method: req.method ?? 'GET',
    target,
    headers: headers.headers,
    longRunning: true,
    bodyless: true,
  });
  let answered = false;
  /** Given up by kapi itself (client gone, session ended): the 'error' the destroy emits is no outage. */
  let cut = false;
  const abandon = () => {
    if (answered) return;
    cut = true;
    upstream.destroy();
  };
  socket.once('close', abandon);
  // Cut by the end of the session or user: still waiting for kube-apiserver, a 401; once switched, the tunnel closes.
  let cutTunnel: (() => void) | undefined;
  const unregister = deps.registry?.register(user, () => {
    if (cutTunnel) return cutTunnel();
    cut = true;
    upstream.destroy();
    if (answered) socket.destroy();
    else refuse(new UnauthorizedError().toStatus());
  });
  if (unregister) socket.once('close', unregister);

  upstream.on('upgrade', (res: IncomingMessage, backendSocket: Socket, backendHead: Buffer) => {
    answered = true;
    socket.off('close', abandon);
    backendSocket.on('error', () => backendSocket.destroy());
    if (socket.destroyed) {
      backendSocket.destroy();
      return;
    }
    const switched = [...forwardResponseHeaders(res.rawHeaders), 'Connection', 'Upgrade'];
    if (res.headers.upgrade) switched.push('Upgrade', res.headers.upgrade);
    socket.write(responseHead(101, res.statusMessage, switched), 'latin1');
    if (backendHead.length > 0) socket.write(backendHead);
    if (head.length > 0) backendSocket.write(head);
    audit(101);
    const kind = streamKind(req.url ?? '');
    deps.streams?.inc(kind);
    backendSocket.once('close', () => deps.streams?.dec(kind));
    spliceSockets(socket, backendSocket);
    const websocket = /^websocket$/i.test(res.headers.upgrade ?? '');
    if (deps.registry) cutTunnel = tunnelCut(socket, backendSocket, websocket, backendHead);
  });

  upstream.on('response', (res: IncomingMessage) => {
    answered = true;
    socket.off('close', abandon);
    const code = res.statusCode ?? 502;
    if (isRedirect(code)) {
      res.destroy();
      return refuse(redirectRefused().toStatus());
    }
    if (code === 401) {
      res.destroy();
      deps.credentialsRefused?.();
      return refuse(credentialsRefused().toStatus());
    }
    audit(code);
    const answer = [...forwardResponseHeaders(res.rawHeaders), 'X-Request-Id', requestId, 'Connection', 'close'];
    socket.write(responseHead(code, res.statusMessage, answer), 'latin1');
    res.on('error', () => socket.destroy());
    res.on('end', () => closeGracefully(socket));
    res.pipe(socket, { end: false });
    socket.once('close', () => res.destroy());
  });

  upstream.on('error', (error: Error) => {
    if (answered || cut || socket.destroyed) return;
    deps.logger.warn('kube-apiserver unreachable for an upgrade', { requestId, error: describe(error) });
    refuse(backendFailure(error).toStatus());
  });

  upstream.end();
}

function pathOf(url: string | undefined): string {
  const q = (url ?? '').indexOf('?');
  return q < 0 ? (url ?? '') : (url ?? '').slice(0, q);
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
