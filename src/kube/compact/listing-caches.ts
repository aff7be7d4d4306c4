import type { Logger } from '../../observability/logger.js';
import { registerCache, type CacheState } from '../cache-registry.js';
import type { KubeClient } from '../client.js';
import { Reflector, type ReflectorSink } from '../reflector.js';
import { ObjectTable, roomFor, type ObjectRecord, type TableShape } from './object-table.js';
import { TableViews } from './table-views.js';

/**
 * The listing's caches, one per kind, started on demand: a kind's watch starts with its first request (which waits
 * for the first list, at most `syncTimeoutMs`) and stops once no request has used it for `idleMs`, dropping what it
 * held; a cluster that only ever lists nodes pays for nothing else. `/readyz` does not wait for them. A kind whose
 * collection kapi already watches (the pods, for the node listing's allocations) attaches to that watch instead of
 * opening a second one.
 */
export interface ListedKind {
  /** The cache's name in metrics and logs (a fixed set: `resources/<resource>`). */
  readonly name: string;
  /** Collection path at kube-apiserver: `/apis/apps/v1/deployments`. */
  readonly listPath: string;
  readonly shape: TableShape;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  toRecord(raw: any): ObjectRecord;
  /** A reflector already watching this collection: the cache attaches to it. */
  readonly shared?: Reflector<unknown>;
}

/** The first list did not arrive in time: the request should be retried (503 with Retry-After). */
export class CacheNotSyncedError extends Error {
  constructor(
    readonly cache: string,
    readonly retryAfterSeconds: number,
    reason: string,
  ) {
    super(`the ${cache} cache has not synced yet (${reason}); try again`);
    this.name = 'CacheNotSyncedError';
  }
}

export interface ListingCacheState {
  readonly name: string;
  readonly running: boolean;
  readonly synced: boolean;
  readonly objects: number;
  readonly bodyBytes: number;
}

/** One kind's table, fed by a reflector as its sink. */
export class ListingCache implements ReflectorSink {
  readonly table: ObjectTable;
  readonly views: TableViews;
  private generation = 0;
  private seen = new Int32Array(0);
  private synced = false;
  private readonly waiters = new Set<() => void>();
  lastUsed: number;

  constructor(
    readonly kind: ListedKind,
    private readonly source: Reflector<unknown>,
    private readonly log: Logger,
    private readonly clock: () => number,
  ) {
    this.table = new ObjectTable(kind.shape);
    this.views = new TableViews(this.table);
    this.lastUsed = clock();
  }

  get name(): string {
    return this.kind.name;
  }

  get lastEventAt(): number | undefined {
    return this.source.lastEventAt;
  }

  get isSynced(): boolean {
    return this.synced;
  }

  /** Requests waiting for the first list: a cache is never idle while one waits. */
  get waiting(): number {
    return this.waiters.size;
  }

  whenSynced(timeoutMs: number): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        this.lastUsed = Math.max(this.lastUsed, this.clock());
        resolve(this.synced);
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(done);
    });
  }

  beginList(): void {
    this.generation++;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  put(_key: string, raw: any): void {
    const metadata = raw?.metadata;
    const namespace = typeof metadata?.namespace === 'string' ? metadata.namespace : '';
    const unchanged = this.table.current(
      namespace,
      String(metadata?.name ?? ''),
      String(metadata?.resourceVersion ?? ''),
    );
    const slot = unchanged >= 0 ? unchanged : this.table.upsert(this.kind.toRecord(raw));
    if (slot >= this.seen.length) {
      const grown = new Int32Array(Math.max(slot + 1, Math.floor(this.seen.length * 1.5), 64));
      grown.set(this.seen);
      this.seen = grown;
    }
    this.seen[slot] = this.generation;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  remove(_key: string, raw: any): void {
    const metadata = raw?.metadata;
    this.table.remove(typeof metadata?.namespace === 'string' ? metadata.namespace : '', String(metadata?.name ?? ''));
  }

  endList(): void {
    const gone: number[] = [];
    for (const slot of this.table.slots()) if (this.seen[slot] !== this.generation) gone.push(slot);
    for (const slot of gone) this.table.removeSlot(slot);
    this.table.settle();
    const room = roomFor(this.table.slotLimit);
    if (this.seen.length > room + (room >> 3)) this.seen = this.seen.slice(0, room);
    if (!this.synced) {
      this.synced = true;
      this.log.info('listing cache synced', { objects: this.table.size, bodyBytes: this.table.bodyBytes });
    }
    for (const wake of [...this.waiters]) wake();
  }

  close(): void {
    this.views.close();
    for (const wake of [...this.waiters]) wake();
  }
}

export interface ListingCachesOptions {
  client: KubeClient;
  logger: Logger;
  /** A cache unused this long stops; default 10 minutes. */
  idleMs?: number;
  /** How long a request waits for a cache's first list; default 10 s. */
  syncTimeoutMs?: number;
  clock?: () => number;
  /** Each start and stop of a cache, for metrics. */
  onLifecycle?: (cache: string, event: 'start' | 'stop') => void;
}

interface Running {
  readonly cache: ListingCache;
  /** Its own reflector (undefined when attached to a shared one). */
  readonly reflector: Reflector<unknown> | undefined;
  readonly unregister: () => void;
}

export class ListingCaches {
  private readonly running = new Map<string, Running>();
  private readonly idleMs: number;
  private readonly syncTimeoutMs: number;
  private readonly clock: () => number;
  private readonly sweeper: NodeJS.Timeout;
  private readonly log: Logger;

  constructor(private readonly options: ListingCachesOptions) {
    this.idleMs = options.idleMs ?? 10 * 60_000;
    this.syncTimeoutMs = options.syncTimeoutMs ?? 10_000;
    this.clock = options.clock ?? Date.now;
    this.log = options.logger.child({ component: 'listing-caches' });
    this.sweeper = setInterval(() => this.sweep(), Math.max(50, Math.min(this.idleMs / 2, 30_000)));
    this.sweeper.unref();
  }

  /**
   * The kind's cache, started if it was not running, once it has synced; a first list that takes longer than the
   * sync timeout is a `CacheNotSyncedError` (the cache keeps syncing for the next request).
   */
  async use(kind: ListedKind): Promise<ListingCache> {
    const running = this.running.get(kind.name) ?? this.start(kind);
    const cache = running.cache;
    cache.lastUsed = this.clock();
    if (cache.isSynced) return cache;
    if (await cache.whenSynced(this.syncTimeoutMs)) return cache;
    const why = running.reflector?.readiness.notReadyReason() ?? 'the first list is still being read';
    throw new CacheNotSyncedError(kind.name, Math.max(1, Math.ceil(this.syncTimeoutMs / 2000)), why);
  }

  /** The state of every running cache (and of `known` ones that are not), for metrics. */
  states(known: readonly string[] = []): ListingCacheState[] {
    const states: ListingCacheState[] = [];
    for (const name of known) {
      const running = this.running.get(name)?.cache;
      states.push({
        name,
        running: running !== undefined,
        synced: running?.isSynced ?? false,
        objects: running?.table.size ?? 0,
        bodyBytes: running?.table.bodyBytes ?? 0,
      });
    }
    return states;
  }

  /** Stops every cache unused for the idle time. */
  sweep(): void {
    const now = this.clock();
    for (const [name, running] of this.running) {
      if (running.cache.waiting === 0 && now - running.cache.lastUsed >= this.idleMs) {
        void this.stopOne(name, running, 'idle');
      }
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.running].map(([name, running]) => this.stopOne(name, running, 'shutdown')));
  }

  private start(kind: ListedKind): Running {
    const log = this.options.logger.child({ cache: kind.name });
    const reflector =
      kind.shared === undefined
        ? new Reflector<unknown>({
            name: kind.name,
            listPath: kind.listPath,
            client: this.options.client,
            logger: this.options.logger,
            transform: () => undefined,
            keepObjects: false,
            register: false,
          })
        : undefined;
    const source = reflector ?? (kind.shared as Reflector<unknown>);
    const cache = new ListingCache(kind, source, log, this.clock);
    source.attach(cache);
    reflector?.start();
    const state: CacheState = {
      name: kind.name,
      get synced() {
        return cache.isSynced;
      },
      get lastEventAt() {
        return cache.lastEventAt;
      },
    };
    const running: Running = { cache, reflector, unregister: registerCache(this.options.client, state) };
    this.running.set(kind.name, running);
    this.log.info('listing cache started', { cache: kind.name, shared: kind.shared !== undefined });
    this.options.onLifecycle?.(kind.name, 'start');
    return running;
  }

  private async stopOne(name: string, running: Running, why: 'idle' | 'shutdown'): Promise<void> {
    if (this.running.get(name) !== running) return;
    this.running.delete(name);
    running.unregister();
    if (running.reflector) await running.reflector.stop();
    else running.cache.kind.shared?.detach(running.cache);
    running.cache.close();
    this.log.info('listing cache stopped', { cache: name, why });
    this.options.onLifecycle?.(name, 'stop');
  }
}
