import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import type { RequestAuthenticator } from '../auth/authenticate.js';
import type { UserInfo } from '../auth/identity.js';
import type { Logger } from '../observability/logger.js';
import { writeStatusAndClose } from '../proxy/raw-http.js';
import { ApiError, statusBody } from '../server/errors.js';

/**
 * A console watch kapi answers itself for those kube-apiserver would refuse (a member's projects, a workspace's
 * departments), the steps every such watch shares: authenticate, let `decide` relay it to kube-apiserver (one who may
 * watch everything) or serve it (or refuse, by throwing an ApiError, answered as a Status before any upgrade), then
 * upgrade and hand the WebSocket to `serve`, with an audit line.
 */
export interface FilteredWatch {
  authenticate: RequestAuthenticator;
  logger: Logger;
  server: WebSocketServer;
  relay: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** What the audit line names (the watch's path) and logs on a failure. */
  what: { path: string; fields: Record<string, unknown> };
  decide(user: UserInfo): Promise<'relay' | 'serve'>;
  serve(ws: WebSocket, user: UserInfo): void;
}

export function handleFilteredWatch(req: IncomingMessage, socket: Duplex, head: Buffer, watch: FilteredWatch): void {
  // nothing is read until it is known who serves the watch
  socket.pause();
  socket.on('error', () => socket.destroy());
  (async () => {
    const user = await watch.authenticate(req);
    if ((await watch.decide(user)) === 'relay') return watch.relay(req, socket, head);
    socket.resume();
    watch.server.handleUpgrade(req, socket, head, (ws) => {
      watch.logger.info('request', {
        audit: true,
        user: user.username,
        verb: 'WATCH',
        path: watch.what.path,
        ...watch.what.fields,
        status: 101,
      });
      watch.serve(ws, user);
    });
  })().catch((error: unknown) => {
    const status =
      error instanceof ApiError ? error.toStatus() : statusBody(500, 'InternalError', 'an internal error occurred');
    if (!(error instanceof ApiError))
      watch.logger.error('watch failed', {
        path: watch.what.path,
        error: error instanceof Error ? error.message : String(error),
      });
    writeStatusAndClose(socket, status);
  });
}
