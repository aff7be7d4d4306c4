import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * Watches over WebSocket, as kube-apiserver serves them (its watch handler hands a WebSocket request to
 * golang.org/x/net/websocket): each event is one text message. x/net/websocket's own checks come first and answer
 * bare, without a Status: a request with no `Origin` header is refused 403 (browsers always send one; kapi relays it),
 * and more than one subprotocol left once the bearer-token one is taken out is a 400 (x/net echoes a single one).
 */
const BEARER_PROTOCOL_PREFIX = 'base64url.bearer.authorization.k8s.io.';

export function isWebSocketRequest(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

/** A refusal written before any handshake, as x/net/websocket writes it: a status line, no Status body. */
export class BareRefusal extends Error {
  constructor(
    readonly code: 400 | 403,
    reason: string,
  ) {
    super(reason);
  }

  get response(): string {
    return `HTTP/1.1 ${this.code} ${this.code === 403 ? 'Forbidden' : 'Bad Request'}\r\nConnection: close\r\n\r\n`;
  }
}

export class WebSocketWatches {
  private readonly wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => (offered.size === 1 ? [...offered][0]! : false),
  });

  /** Throws `BareRefusal` for what x/net/websocket refuses; otherwise completes the handshake and hands the socket on. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, serve: (ws: WebSocket) => void): void {
    if (!req.headers.origin) throw new BareRefusal(403, 'no Origin header');
    const offered = (req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((protocol) => protocol.trim())
      .filter((protocol) => protocol !== '' && !protocol.startsWith(BEARER_PROTOCOL_PREFIX));
    if (offered.length > 1) throw new BareRefusal(400, 'more than one subprotocol');
    if (offered.length === 0) delete req.headers['sec-websocket-protocol'];
    else req.headers['sec-websocket-protocol'] = offered[0];
    this.wss.handleUpgrade(req, socket, head, serve);
  }

  /** Ends every WebSocket watch (sandbox stop). */
  closeAll(): void {
    for (const client of this.wss.clients) client.terminate();
  }
}
