import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, type Logger } from '../../src/observability/logger.js';
import { connectionFor, tokenAccess, type KubeConnection } from '../../src/kube/connection.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

export interface RecordedRequest {
  kind: 'list' | 'watch';
  query: URLSearchParams;
  at: number;
}

interface HistoryEvent {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: any;
}

/**
 * A scripted kube-apiserver for one collection, on loopback: paged lists with continue tokens, watches replayed from
 * an event history (410 once the history is compacted past the asked resourceVersion), bookmarks, dropped
 * connections, injected HTTP errors, hung watches, and events written in small pieces so they cross chunk
 * boundaries. Objects are cluster-scoped or namespaced as given; the key is namespace/name or name.
 */
export class FakeKubeApiserver {
  readonly requests: RecordedRequest[] = [];
  /** How the next watch from a compacted resourceVersion is refused. */
  expiredAs: 'event' | 'http' = 'event';
  /** Bytes per write of a watch event or list answer (written with a pause between pieces); 0 writes each whole. */
  pieceBytes = 0;
  /** Accept watches but never write to them or end them (a hung connection). */
  hangWatches = false;
  /** Answer watches with 200 and end them at once, empty (a misbehaving proxy). */
  endWatchesAtOnce = false;
  /** The next `continue` request answers 410 once. */
  expireNextContinue = false;
  /** The next list answer is cut off after this many bytes (a 200 whose body is not a whole JSON list). */
  truncateNextListAt: number | undefined;
  private failures: Array<{ status: number; kind: 'list' | 'watch' | 'any' }> = [];
  private failAllWith: number | undefined;
  /** `/readyz` requests (kapi's probe): 200, or 500 while `failAll` holds a 5xx. */
  readinessProbes = 0;
  private behind = 0;
  private objects = new Map<string, any>();
  private history: HistoryEvent[] = [];
  private rv = 100;
  private compactedBefore = 0;
  private snapshots = new Map<string, { rv: number; items: any[] }>();
  private watches = new Set<{ res: http.ServerResponse; queue: Promise<void> }>();
  private hung = new Set<http.ServerResponse>();
  private server!: http.Server;
  url = '';

  private constructor(readonly collection: string) {}

  static async start(collection: string): Promise<FakeKubeApiserver> {
    const fake = new FakeKubeApiserver(collection);
    fake.server = http.createServer((req, res) => fake.handle(req, res));
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  get openWatches(): number {
    return this.watches.size + this.hung.size;
  }

  count(kind: 'list' | 'watch'): number {
    return this.requests.filter((r) => r.kind === kind).length;
  }

  /** Creates or replaces an object, recording the event and sending it to open watches. */
  put(object: any): any {
    const key = keyOf(object);
    const type = this.objects.has(key) ? 'MODIFIED' : 'ADDED';
    const stored = { ...object, metadata: { ...object.metadata, resourceVersion: String(++this.rv) } };
    this.objects.set(key, stored);
    this.record(type, stored);
    return stored;
  }

  remove(key: string): void {
    const old = this.objects.get(key);
    if (!old) return;
    this.objects.delete(key);
    this.record('DELETED', { ...old, metadata: { ...old.metadata, resourceVersion: String(++this.rv) } });
  }

  /** Changes made while history is lost: no watch sees them, and every older resourceVersion becomes expired. */
  changeWithoutHistory(change: () => void): void {
    const saved = this.watches;
    this.watches = new Set();
    change();
    this.watches = saved;
    this.compact();
  }

  compact(): void {
    this.compactedBefore = this.rv;
    this.history = [];
  }

  bookmark(): void {
    this.rv++;
    this.broadcast({
      type: 'BOOKMARK',
      object: { kind: 'Node', apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) } },
    });
  }

  /** Sends raw text to every open watch (for malformed or ERROR events). */
  sendRaw(text: string): void {
    for (const watch of this.watches) this.write(watch, text);
  }

  dropWatches(): void {
    for (const { res } of this.watches) res.socket?.destroy();
    for (const res of this.hung) res.socket?.destroy();
    this.watches.clear();
    this.hung.clear();
  }

  failNext(count: number, status = 500, kind: 'list' | 'watch' | 'any' = 'any'): void {
    for (let i = 0; i < count; i++) this.failures.push({ status, kind });
  }

  /**
   * The next `count` watches get kube-apiserver's answer for a resourceVersion its watch cache has not reached yet:
   * 504 Timeout "Too large resource version", cause ResourceVersionTooLarge, Retry-After 1.
   */
  watchCacheBehindNext(count: number): void {
    this.behind += count;
  }

  /** Every request answers `status` until called again with undefined. */
  failAll(status: number | undefined): void {
    this.failAllWith = status;
  }

  /** Goes away (connections refused) for `downMs`, then listens again on the same port with the same state. */
  async restart(downMs: number): Promise<void> {
    const { port } = this.server.address() as AddressInfo;
    await this.stop();
    await new Promise((resolve) => setTimeout(resolve, downMs));
    this.server = http.createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    this.dropWatches();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private record(type: HistoryEvent['type'], object: any): void {
    this.history.push({ rv: this.rv, type, object });
    this.broadcast({ type, object: { apiVersion: 'v1', ...object } });
  }

  private broadcast(event: unknown): void {
    const text = `${JSON.stringify(event)}\n`;
    for (const watch of this.watches) this.write(watch, text);
  }

  private write(watch: { res: http.ServerResponse; queue: Promise<void> }, text: string): void {
    const bytes = Buffer.from(text);
    const size = this.pieceBytes || bytes.length;
    watch.queue = watch.queue.then(async () => {
      for (let at = 0; at < bytes.length; at += size) {
        if (watch.res.destroyed) return;
        watch.res.write(bytes.subarray(at, at + size));
        if (size < bytes.length) await new Promise((resolve) => setTimeout(resolve, 1));
      }
    });
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (url.pathname === '/readyz') {
      this.readinessProbes++;
      if (req.headers.authorization !== 'Bearer test-token') return status(res, 401, 'Unauthorized', 'no token');
      const failing = this.failAllWith !== undefined && this.failAllWith >= 500;
      res.writeHead(failing ? 500 : 200, { 'Content-Type': 'text/plain' });
      return void res.end(failing ? 'etcd failed' : 'ok');
    }
    const kind = url.searchParams.get('watch') ? 'watch' : 'list';
    this.requests.push({ kind, query: url.searchParams, at: Date.now() });
    if (req.headers.authorization !== 'Bearer test-token') return status(res, 401, 'Unauthorized', 'no token');
    if (url.pathname !== this.collection) return status(res, 404, 'NotFound', `${url.pathname} not found`);
    const failure = this.failAllWith ?? this.takeFailure(kind);
    if (failure) return status(res, failure, 'InternalError', 'injected failure');
    if (kind === 'watch' && this.behind > 0) {
      this.behind--;
      const rv = url.searchParams.get('resourceVersion');
      return json(res, 504, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `Timeout: Too large resource version: ${rv}, current: ${Number(rv) - 1}`,
        reason: 'Timeout',
        details: {
          causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
          retryAfterSeconds: 1,
        },
        code: 504,
      });
    }
    if (kind === 'list') this.list(url.searchParams, res);
    else this.watch(url.searchParams, res);
  }

  private takeFailure(kind: 'list' | 'watch'): number | undefined {
    const index = this.failures.findIndex((f) => f.kind === 'any' || f.kind === kind);
    if (index === -1) return undefined;
    return this.failures.splice(index, 1)[0]!.status;
  }

  private list(query: URLSearchParams, res: http.ServerResponse): void {
    const limit = Number(query.get('limit') || 0) || Infinity;
    const token = query.get('continue');
    if (token && this.expireNextContinue) {
      this.expireNextContinue = false;
      return status(res, 410, 'Expired', 'The provided continue parameter is too old');
    }
    let snapshot = token ? this.snapshots.get(token.split(':')[0]!) : undefined;
    if (token && !snapshot) return status(res, 410, 'Expired', 'unknown continue token');
    if (!snapshot) {
      const items = [...this.objects.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, o]) => o);
      snapshot = { rv: this.rv, items };
      this.snapshots.set(String(this.snapshots.size), snapshot);
    }
    const id = [...this.snapshots.entries()].find(([, s]) => s === snapshot)![0];
    const offset = token ? Number(token.split(':')[1]) : 0;
    const items = snapshot.items.slice(offset, offset + limit);
    const next = offset + items.length < snapshot.items.length ? `${id}:${offset + items.length}` : undefined;
    const body = Buffer.from(
      JSON.stringify({
        kind: 'List',
        apiVersion: 'v1',
        metadata: { resourceVersion: String(snapshot.rv), continue: next },
        items,
      }),
    );
    const cut = this.truncateNextListAt;
    this.truncateNextListAt = undefined;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    // in pieces, as a large page arrives: the reader must not depend on where chunks end
    const size = this.pieceBytes || body.length;
    const sent = cut === undefined ? body : body.subarray(0, cut);
    void (async () => {
      for (let at = 0; at < sent.length; at += size) {
        if (res.destroyed) return;
        res.write(sent.subarray(at, at + size));
        if (size < sent.length) await new Promise((resolve) => setTimeout(resolve, 1));
      }
      res.end();
    })();
  }

  private watch(query: URLSearchParams, res: http.ServerResponse): void {
    const from = Number(query.get('resourceVersion') || this.rv);
    const expired = from < this.compactedBefore;
    if (expired && this.expiredAs === 'http') return status(res, 410, 'Expired', 'too old resource version');
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    if (this.endWatchesAtOnce) {
      res.end();
      return;
    }
    if (this.hangWatches) {
      this.hung.add(res);
      res.on('close', () => this.hung.delete(res));
      return;
    }
    const watch = { res, queue: Promise.resolve() };
    if (expired) {
      const error = {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'Expired',
        code: 410,
        message: 'too old resource version',
      };
      this.write(watch, `${JSON.stringify({ type: 'ERROR', object: error })}\n`);
      void watch.queue.then(() => res.end());
      return;
    }
    for (const event of this.history) {
      if (event.rv > from)
        this.write(watch, `${JSON.stringify({ type: event.type, object: { apiVersion: 'v1', ...event.object } })}\n`);
    }
    this.watches.add(watch);
    const seconds = Number(query.get('timeoutSeconds') || 0);
    const timer = seconds ? setTimeout(() => void watch.queue.then(() => res.end()), seconds * 1000) : undefined;
    res.on('close', () => {
      clearTimeout(timer);
      this.watches.delete(watch);
    });
  }
}

export function keyOf(object: any): string {
  const { namespace, name } = object.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

function json(res: http.ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
}

function status(res: http.ServerResponse, code: number, reason: string, message: string): void {
  json(res, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason, message, code });
}

export function connectTo(fake: FakeKubeApiserver, probeIntervalMs?: number): Promise<KubeConnection> {
  return Promise.resolve(connectionFor(tokenAccess(fake.url, 'test-token'), 'sandbox', { probeIntervalMs }));
}

export interface CapturedLog {
  level: string;
  message: string;
  [field: string]: unknown;
}

/** kapi's logger with its JSON lines kept in memory, for tests that assert what was (not) logged. */
export function capturingLogger(): { logger: Logger; lines: CapturedLog[] } {
  const lines: CapturedLog[] = [];
  const logger = createLogger('debug', { sink: (line) => lines.push(JSON.parse(line) as CapturedLog) });
  return { logger, lines };
}

/**
 * Polls until `check` stops throwing (or returns true). No deadline of its own: the test's timeout is the only
 * limit, as a busy machine is slow, not wrong.
 */
export async function eventually(check: () => unknown): Promise<void> {
  for (;;) {
    try {
      if (check() !== false) return;
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function node(name: string, labels: Record<string, string> = {}): any {
  return {
    kind: 'Node',
    metadata: { name, uid: `uid-${name}`, labels, managedFields: [{ manager: 'kubelet', operation: 'Update' }] },
    spec: {},
    status: { capacity: { cpu: '4', memory: '8Gi' } },
  };
}
