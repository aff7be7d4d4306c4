/**
 * A forwarder between a test client and a fake kube-apiserver (node:http on loopback), wired as production wires
 * it: request id → authentication → forwarder → Status errors, on `listen()` servers with the 'upgrade' event.
 * The fake authentication accepts one token, as a bearer header or as the WebSocket bearer subprotocol.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import net from 'node:net';
import express from 'express';
import type { UserInfo } from '../../src/auth/identity.js';
import { connectionFor, tokenAccess, type KubeConnection } from '../../src/kube/connection.js';
import { createLogger, type Logger } from '../../src/observability/logger.js';
import { createForwarder, type Forwarder, type ForwarderDeps } from '../../src/proxy/forwarder.js';
import { errorHandler, notFound } from '../../src/server/error-handler.js';
import { UnauthorizedError } from '../../src/server/errors.js';
import { listen, type Listener } from '../../src/server/listener.js';
import { requestId } from '../../src/server/request-id.js';
import { forwardedRequests, withForwarding } from '../../src/server/forwarded-requests.js';

export const USER_TOKEN = 'user-token-0123456789';
export const KAPI_TOKEN = 'kapi-sa-token-9876543210';
export const ALICE: UserInfo = { username: 'alice', groups: ['dev'] };

export interface RecordedRequest {
  method: string;
  url: string;
  rawHeaders: string[];
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A fake kube-apiserver: records every request it receives (ordinary or upgrade) and lets the test answer. */
export class Backend {
  readonly requests: RecordedRequest[] = [];
  readonly sockets = new Set<Socket>();
  server!: http.Server;
  url = '';
  onRequest: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void = (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"kind":"NodeList","items":[]}');
  };
  /** When set, upgrade requests for which it returns true reach `onUpgrade`; the rest are ordinary requests. */
  acceptUpgrade: (req: http.IncomingMessage) => boolean = () => true;
  onUpgrade: (req: http.IncomingMessage, socket: Socket, head: Buffer) => void = (_req, socket) => socket.destroy();

  static async start(): Promise<Backend> {
    const backend = new Backend();
    backend.server = http.createServer({ shouldUpgradeCallback: (req) => backend.acceptUpgrade(req) }, (req, res) => {
      const chunks: Buffer[] = [];
      // Streaming handlers (watches) are answered before the body is read: record on arrival.
      const record: RecordedRequest = {
        method: req.method!,
        url: req.url!,
        rawHeaders: req.rawHeaders,
        headers: req.headers,
        body: '',
      };
      backend.requests.push(record);
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        record.body = Buffer.concat(chunks).toString('utf8');
        backend.onRequest(req, res, record.body);
      });
    });
    backend.server.on('upgrade', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
      backend.requests.push({
        method: req.method!,
        url: req.url!,
        rawHeaders: req.rawHeaders,
        headers: req.headers,
        body: '',
      });
      backend.onUpgrade(req, socket, head);
    });
    backend.server.on('connection', (socket: Socket) => {
      backend.sockets.add(socket);
      socket.on('close', () => backend.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => backend.server.listen(0, '127.0.0.1', resolve));
    backend.url = `http://127.0.0.1:${(backend.server.address() as AddressInfo).port}`;
    return backend;
  }

  get host(): string {
    return new URL(this.url).host;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Log lines kept in memory, so tests can check that no credential was ever logged. */
export class CapturedLogs {
  readonly lines: string[] = [];
  readonly logger: Logger = createLogger('debug', { sink: (line) => this.lines.push(line) });
}

function bearerOf(req: http.IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header?.startsWith('Bearer ')) return header.slice(7);
  const protocols = req.headers['sec-websocket-protocol']?.split(',').map((p) => p.trim()) ?? [];
  const entry = protocols.find((p) => p.startsWith('base64url.bearer.authorization.k8s.io.'));
  return entry
    ? Buffer.from(entry.slice('base64url.bearer.authorization.k8s.io.'.length), 'base64url').toString()
    : undefined;
}

/** The fake authenticator: one known token is alice (or `user`); anything else is a 401. */
export async function authenticateRequest(req: http.IncomingMessage, user: UserInfo = ALICE): Promise<UserInfo> {
  if (bearerOf(req) === USER_TOKEN) return user;
  throw new UnauthorizedError();
}

export interface Kapi {
  url: string;
  port: number;
  forwarder: Forwarder;
  connection: KubeConnection;
  listener: Listener;
  logs: CapturedLogs;
  stop(): Promise<void>;
}

export async function startKapi(
  backendUrl: string,
  options: {
    connection?: KubeConnection;
    backend?: ForwarderDeps['backend'];
    tls?: { key: string; cert: string };
    streamRegistry?: ForwarderDeps['streamRegistry'];
    /** Who the known token authenticates as; alice by default. */
    user?: UserInfo;
    maxRequestBodyBytes?: number;
    passThrough?: ForwarderDeps['passThrough'];
  } = {},
): Promise<Kapi> {
  const logs = new CapturedLogs();
  const connection = options.connection ?? connectionFor(tokenAccess(backendUrl, KAPI_TOKEN), 'sandbox');
  const authenticate = (req: http.IncomingMessage) => authenticateRequest(req, options.user);
  const forwarder = createForwarder({
    connection,
    logger: logs.logger,
    authenticateRequest: authenticate,
    backend: options.backend,
    streamRegistry: options.streamRegistry,
    maxRequestBodyBytes: options.maxRequestBodyBytes,
    passThrough: options.passThrough,
  });
  // Forwarded paths take production's pipeline; anything else is a 404 Status, as kapi answers unknown paths.
  const others = express();
  others.use(requestId);
  others.use(notFound);
  others.use(errorHandler(logs.logger));
  const app = withForwarding(
    forwardedRequests({ logger: logs.logger, authenticate, forward: forwarder.forward }),
    others,
  );
  const listener = await listen(app, { port: 0, host: '127.0.0.1', tls: options.tls });
  listener.server.on('upgrade', forwarder.handleUpgrade);
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${listener.port}`,
    port: listener.port,
    forwarder,
    connection,
    listener,
    logs,
    async stop() {
      await listener.stop(0);
      forwarder.close();
      connection.close();
    },
  };
}

/** A fake kube-apiserver and a kapi forwarding to it: the set-up of most forwarder tests. */
export async function startBackendAndKapi(): Promise<{ backend: Backend; kapi: Kapi }> {
  const backend = await Backend.start();
  return { backend, kapi: await startKapi(backend.url) };
}

/** Stops both, then checks that whatever happened, no credential reached a log line. */
export async function stopCheckingLogs(kapi: Kapi, backend: Backend): Promise<void> {
  await kapi.stop();
  await backend.close();
  const logged = kapi.logs.lines.join('\n');
  expect(logged).not.toContain(USER_TOKEN);
  expect(logged).not.toContain(KAPI_TOKEN);
}

export interface Answer {
  status: number;
  rawHeaders: string[];
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request with headers exactly as given (flat raw array: case and duplicates kept), on a fresh connection. */
export function send(
  url: string,
  options: { method?: string; path: string; headers?: string[]; body?: string | Buffer[] },
): Promise<Answer> {
  const given = options.headers ?? [];
  // Raw header arrays get no Host from Node; HTTP/1.1 servers refuse a request without one.
  const headers = headerValues(given, 'host').length > 0 ? given : ['Host', new URL(url).host, ...given];
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}${options.path}`,
      { method: options.method ?? 'GET', headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            rawHeaders: res.rawHeaders,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (Array.isArray(options.body)) {
      for (const chunk of options.body) req.write(chunk);
      req.end();
    } else {
      req.end(options.body);
    }
  });
}

export const auth = ['Authorization', `Bearer ${USER_TOKEN}`];

/** A raw TCP exchange: writes `text`, collects everything until the server closes (or `timeoutMs`). */
export function rawExchange(
  port: number,
  text: string | Buffer,
  timeoutMs = 3_000,
): Promise<{ data: Buffer; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ data: Buffer.concat(chunks), closedByServer: false });
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      clearTimeout(timer);
      socket.end();
      resolve({ data: Buffer.concat(chunks), closedByServer: true });
    });
    socket.write(text);
  });
}

/**
 * Polls until `check` holds. No deadline of its own: the test's timeout is the only limit, as a busy machine is
 * slow, not wrong.
 */
export async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Header values by lower-cased name from a flat raw array. */
export function headerValues(raw: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) out.push(raw[i + 1]!);
  return out;
}
