import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../observability/logger.js';
import { DEFAULT_BACKOFF, backoffDelay, type BackoffPolicy } from './backoff.js';
import { CacheHealth, describeError } from './cache-health.js';
import type { ReadinessCheck } from './caches.js';
import { KubeApiError, type KubeClient } from './client.js';
import { JsonLineSplitter } from './json-lines.js';
import { ListItemScanner } from './list-items.js';
import {
  ObjectStore,
  type ChangeEvent,
  type ChangeHandler,
  type ListedObjects,
  type StoredObject,
} from './object-store.js';
import { registerCache } from './cache-registry.js';

export interface ReflectorOptions<T> {
  client: KubeClient;
  logger: Logger;
  /** Short name for logs and readiness, e.g. "nodes". */
  name: string;
  /** Collection path: '/api/v1/nodes', '/apis/iam.kapi.io/v1beta1/users', '/api/v1/namespaces/kapi-system/secrets'. */
  listPath: string;
  fieldSelector?: string;
  labelSelector?: string;
  /**
   * Trims the raw JSON object to what is kept; the raw object is dropped right after. `key` is the store key, so a
   * record can share that string instead of keeping its own copy of the namespace and name.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  transform: (raw: any, key: string) => T;
  /**
   * Whether the reflector keeps the transformed objects itself (default true). A reflector that only feeds sinks
   * (`attach`) keeps nothing of its own.
   */
  keepObjects?: boolean;
  /** Whether it shows in the cache metrics itself (default true); a cache that reports its own state says false. */
  register?: boolean;
  /** Store key; default `namespace/name`, or `name` for cluster-scoped objects. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  keyOf?: (raw: any) => string;
  /**
   * Tells that a new version of an object equals the stored one, so it is no change (no event, no revision). Without
   * it a relist compares resourceVersions, kept for every object; give it for many tiny objects, where the version
   * would cost more than the object.
   */
  same?: (stored: T, listed: T) => boolean;
  /** Objects per list page; default 500. */
  pageSize?: number;
  /** Readiness fails once the cache could not be kept current this long; default 30 s. */
  staleAfterMs?: number;
  /** Server-side watch timeout, picked at random in this range so replicas do not re-watch in lockstep. */
  watchTimeoutSeconds?: { min: number; max: number };
  /** A watch silent for its timeout plus this long is taken as hung and aborted; default 30 s. */
  idleGraceMs?: number;
  backoff?: BackoffPolicy;
  /** Per list page; default 60 s. */
  listTimeoutMs?: number;
}

/**
 * Raw objects handed on as they are read, for caches that keep them their own way (the listing's compact tables):
 * a whole list is `beginList`, `put`s, `endList` (objects not put since `beginList` are gone); watch events are `put`
 * and `remove`. A sink attached to a running reflector gets the next full list (the reflector relists at once).
 */
export interface ReflectorSink {
  beginList(): void;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  put(key: string, raw: any): void;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  remove(key: string, raw: any): void;
  endList(): void;
}

/** Consecutive failed watches (without progress) after which the cache is rebuilt from a fresh list. */
const RELIST_AFTER_FAILURES = 5;
/** A list whose continue token keeps expiring is restarted this many times before it counts as a failure. */
const LIST_RESTARTS = 3;
/** A watch that ends sooner without an event is a failure, so a broken server is not re-watched in a tight loop. */
const SHORTEST_NORMAL_WATCH_MS = 1000;
/** A watch open this long counts as healthy even if nothing changed, so the backoff starts over. */
const HEALTHY_WATCH_MS = 10_000;

/** The resourceVersion we hold is older than what kube-apiserver keeps: only a new list can continue. */
class ResourceVersionExpired extends Error {}

interface KubeList {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: unknown[];
}

interface WatchEvent {
  type?: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  object?: any;
}

/**
 * A list+watch cache of one collection, as client-go's reflector and store: a paged list fills the store, a watch
 * from the list's resourceVersion keeps it current, and every interruption is recovered — an expired
 * resourceVersion by a relist, anything else by a re-watch with backoff. Readers get the stored objects and
 * change events; `/readyz` gets `readiness`.
 */
export class Reflector<T> {
  readonly readiness: ReadinessCheck;
  private readonly store: ObjectStore<T>;
  private readonly handlers = {
    added: new Set<ChangeHandler<T>>(),
    modified: new Set<ChangeHandler<T>>(),
    deleted: new Set<ChangeHandler<T>>(),
    synced: new Set<() => void>(),
  };
  private readonly stopping = new AbortController();
  private readonly syncWaiters = new Set<(error: Error) => void>();
  private running: Promise<void> | undefined;
  private resourceVersion = '';
  private isSynced = false;
  private readonly health: CacheHealth;
  private readonly log: Logger;
  private readonly keyOf: (raw: unknown) => string | undefined;
  private readonly unregister: () => void;
  private lastHeard: number | undefined;
  /** Sinks that get every object; `joining` ones wait for the start of the next list. */
  private readonly sinks = new Set<ReflectorSink>();
  private readonly joining = new Set<ReflectorSink>();
  /** Aborts the current watch so that a sink that joined gets a list at once. */
  private relistNow: AbortController | undefined;
  private readonly keepObjects: boolean;

  constructor(private readonly options: ReflectorOptions<T>) {
    this.keepObjects = options.keepObjects ?? true;
    this.log = options.logger.child({ cache: options.name });
    this.keyOf = options.keyOf ?? defaultKey;
    this.store = new ObjectStore<T>((event, obj, old) => this.emit(event, obj, old), options.same);
    this.health = new CacheHealth(this.log, options.staleAfterMs ?? 30_000);
    const state = () => ({ synced: this.isSynced, stopped: this.stopped });
    this.readiness = { name: `cache:${options.name}`, notReadyReason: () => this.health.notReadyReason(state()) };
    this.unregister = options.register === false ? () => undefined : registerCache(options.client, this);
  }

  get name(): string {
    return this.options.name;
  }

  /** When kube-apiserver was last heard from (ms since the epoch): a list, a watch opened, an event or bookmark. */
  get lastEventAt(): number | undefined {
    return this.lastHeard;
  }

  get size(): number {
    return this.store.size;
  }

  get revision(): number {
    return this.store.revision;
  }

  get synced(): boolean {
    return this.isSynced;
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  list(): readonly T[] {
    return this.store.list();
  }

  on(event: ChangeEvent, handler: ChangeHandler<T>): () => void;
  on(event: 'synced', handler: () => void): () => void;
  on(event: ChangeEvent | 'synced', handler: ChangeHandler<T> | (() => void)): () => void {
    const set = this.handlers[event] as Set<typeof handler>;
    set.add(handler);
    return () => set.delete(handler);
  }

  /**
   * Hands every object on to `sink` from the next full list on; a running reflector relists at once for it (its
   * watch is cut). The sink knows it is current when its `endList` comes.
   */
  attach(sink: ReflectorSink): void {
    if (this.sinks.has(sink) || this.joining.has(sink)) return;
    this.joining.add(sink);
    this.relistNow?.abort();
  }

  detach(sink: ReflectorSink): void {
    this.sinks.delete(sink);
    this.joining.delete(sink);
  }

  /** Lists and watches until `stop()`, recovering from every failure; never throws. */
  start(): void {
    if (this.running || this.stopped) return;
    this.running = this.run().catch((error: unknown) => {
      // run() handles its own failures; reaching this is a bug, and the cache must say so rather than hang silently
      this.health.failed(error, 1, 0);
      this.log.error('cache loop ended unexpectedly', { error: describeError(error) });
    });
  }

  waitForSync(timeoutMs?: number): Promise<void> {
    if (this.isSynced) return Promise.resolve();
    if (this.stopped) return Promise.reject(new Error(`cache ${this.options.name} was stopped before it synced`));
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (error?: Error) => {
        clearTimeout(timer);
        unsubscribe();
        this.syncWaiters.delete(finish);
        if (error) reject(error);
        else resolve();
      };
      const unsubscribe = this.on('synced', () => finish());
      this.syncWaiters.add(finish);
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          const why = this.health.lastError ? `; last error: ${this.health.lastError}` : '';
          finish(new Error(`cache ${this.options.name} did not sync within ${timeoutMs} ms${why}`));
        }, timeoutMs);
      }
    });
  }

  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopping.abort();
      this.unregister();
      for (const fail of [...this.syncWaiters])
        fail(new Error(`cache ${this.options.name} was stopped before it synced`));
    }
    await this.running;
  }

  private get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  private async run(): Promise<void> {
    const policy = this.options.backoff ?? DEFAULT_BACKOFF;
    let relist = true;
    let failures = 0;
    let expiredInARow = 0;
    let behindInARow = 0;
    while (!this.stopped) {
      const attempt = { progressed: false };
      let delay = 0;
      let wakeWhenAnswering = false;
      try {
        if (relist || this.joining.size > 0) {
          await this.listAll();
          relist = false;
        }
        await this.watchOnce(attempt);
        // closed by the server at timeoutSeconds: the normal end of a watch, continue at once
        failures = 0;
        expiredInARow = 0;
        behindInARow = 0;
        this.log.debug('watch closed by the server; watching again', { resourceVersion: this.resourceVersion });
      } catch (error) {
        if (this.stopped) break;
        // cut (or failed) while a sink waits to join: list now; a failing list counts as a failure below
        if (this.joining.size > 0) continue;
        if (attempt.progressed) {
          failures = 0;
          expiredInARow = 0;
          behindInARow = 0;
        }
        if (isWatchCacheBehind(error) && behindInARow < BEHIND_RETRIES) {
          // kube-apiserver's watch cache has not reached a resourceVersion it gave out (a write's, or a list's from
          // etcd): it says so with 504 and Retry-After; the same watch succeeds once the cache catches up. Not a
          // failure of the cache, so no warning and no stale clock; if it persists, relist as client-go does.
          behindInARow++;
          delay = Math.max(retryAfterMs(error), backoffDelay(behindInARow, policy));
          this.log.info('watch cache behind the resourceVersion; watching again', {
            resourceVersion: this.resourceVersion,
            retryInMs: delay,
          });
        } else if (isExpired(error) || isWatchCacheBehind(error)) {
          behindInARow = 0;
          relist = true;
          expiredInARow++;
          // a relist answered by another immediate expiry must not spin
          delay = expiredInARow > 1 ? backoffDelay(expiredInARow - 1, policy) : 0;
          this.log.info('resourceVersion expired; relisting', { resourceVersion: this.resourceVersion });
        } else {
          failures++;
          if (!relist && failures >= RELIST_AFTER_FAILURES) {
            relist = true;
            this.log.warn('watch keeps failing; relisting', { failures });
          }
          delay = backoffDelay(failures, policy);
          wakeWhenAnswering = looksLikeOutage(error);
          this.health.failed(error, failures, delay);
        }
      }
      if (delay > 0) await this.pause(delay, wakeWhenAnswering);
    }
  }

  /**
   * Waits out a backoff; after an outage, only until kube-apiserver answers again (its readiness, probed once for
   * every cache that waits), so the caches, and `/readyz` with them, come back within a probe of its return rather
   * than at their next backoff step (up to 30 s).
   */
  private async pause(ms: number, wakeWhenAnswering: boolean): Promise<void> {
    const done = new AbortController();
    const signal = AbortSignal.any([this.stopping.signal, done.signal]);
    const waits: Promise<unknown>[] = [sleep(ms, undefined, { signal }).catch(() => undefined)];
    const health = wakeWhenAnswering ? this.options.client.connection?.health : undefined;
    if (health) waits.push(health.whenAnswering(signal));
    await Promise.race(waits);
    done.abort();
  }

  /** Reads the whole collection page by page, then makes the store match it. */
  private async listAll(): Promise<void> {
    const started = Date.now();
    for (const sink of this.joining) this.sinks.add(sink);
    this.joining.clear();
    for (let restart = 0; ; restart++) {
      try {
        for (const sink of this.sinks) this.toSink(sink, 'beginList', () => sink.beginList());
        const { entries, resourceVersion } = await this.listPages();
        if (this.keepObjects) this.store.replace(entries);
        for (const sink of this.sinks) this.toSink(sink, 'endList', () => sink.endList());
        this.resourceVersion = resourceVersion;
        this.lastHeard = Date.now();
        this.health.current();
        this.log.info('listed', { objects: entries.size, resourceVersion, durationMs: Date.now() - started });
        if (!this.isSynced) {
          this.isSynced = true;
          for (const handler of [...this.handlers.synced]) this.call(handler, 'synced');
        }
        return;
      } catch (error) {
        if (!isExpired(error) || this.stopped) throw error;
        if (restart >= LIST_RESTARTS)
          throw new Error(`the list kept expiring while paging: ${describeError(error)}`, { cause: error });
        this.log.info('list continue token expired; restarting the list', { restart: restart + 1 });
      }
    }
  }

  private async listPages(): Promise<{ entries: ListedObjects<T>; resourceVersion: string }> {
    const entries = this.store.listing();
    let token: string | undefined;
    let resourceVersion: string;
    do {
      const page = await this.listPage(token, (raw) => {
        const key = this.keyOf(raw);
        if (key === undefined) return;
        for (const sink of this.sinks) this.toSink(sink, 'put', () => sink.put(key, raw));
        const stored = this.keepObjects ? this.toStored(key, raw) : undefined;
        if (stored) entries.set(key, stored.value, stored.resourceVersion);
      });
      resourceVersion = page.metadata?.resourceVersion ?? '';
      token = page.metadata?.continue || undefined;
    } while (token);
    return { entries, resourceVersion };
  }

  /**
   * One page of the list, each item handed to `onItem` as soon as it arrived (ListItemScanner): a page's objects are
   * never all parsed at once, so the list's peak memory is the cache being built, not the page.
   */
  private async listPage(token: string | undefined, onItem: (raw: unknown) => void): Promise<KubeList> {
    const { client, listPath, fieldSelector, labelSelector } = this.options;
    const request = {
      path: listPath,
      query: { limit: this.options.pageSize ?? 500, continue: token, fieldSelector, labelSelector },
      signal: this.stopping.signal,
      timeoutMs: this.options.listTimeoutMs ?? 60_000,
    };
    const response = await client.stream(request);
    const scanner = new ListItemScanner(onItem);
    try {
      for await (const chunk of response as AsyncIterable<Buffer>) scanner.push(chunk);
      return scanner.rest() as KubeList;
    } catch (error) {
      response.destroy();
      if (!(error instanceof SyntaxError)) throw error;
      // A garbled answer is the cluster's failure, as KubeClient.request reports it.
      throw new KubeApiError(502, undefined, `GET ${listPath}: the answer was not a JSON list (${error.message})`);
    }
  }

  /** One watch request, until the server ends it (resolves) or it fails (throws). */
  private async watchOnce(attempt: { progressed: boolean }): Promise<void> {
    const { min, max } = this.options.watchTimeoutSeconds ?? { min: 300, max: 600 };
    const timeoutSeconds = min + Math.floor(Math.random() * (max - min + 1));
    const idleMs = timeoutSeconds * 1000 + (this.options.idleGraceMs ?? 30_000);
    const hung = new AbortController();
    const relistNow = new AbortController();
    this.relistNow = relistNow;
    // a sink that attached since the last list (between its end and this watch) is served now, not at the watch's end
    if (this.joining.size > 0) relistNow.abort();
    const watchdog = setTimeout(() => hung.abort(), idleMs);
    const opened = Date.now();
    try {
      const response = await this.options.client.stream({
        path: this.options.listPath,
        query: {
          watch: 1,
          resourceVersion: this.resourceVersion || undefined,
          allowWatchBookmarks: true,
          timeoutSeconds,
          fieldSelector: this.options.fieldSelector,
          labelSelector: this.options.labelSelector,
        },
        signal: AbortSignal.any([this.stopping.signal, hung.signal, relistNow.signal]),
      });
      this.health.current();
      this.lastHeard = Date.now();
      response.setEncoding('utf8');
      const lines = new JsonLineSplitter();
      const apply = (line: string) => {
        this.lastHeard = Date.now();
        this.applyEvent(line);
        attempt.progressed = true;
      };
      for await (const chunk of response as AsyncIterable<string>) {
        watchdog.refresh();
        lines.push(chunk, apply);
      }
      const rest = lines.rest();
      if (rest) apply(rest);
      // as client-go: a watch that ends at once with nothing in it is a failing server or proxy, not a timeout
      if (!attempt.progressed && Date.now() - opened < SHORTEST_NORMAL_WATCH_MS) {
        throw new Error('very short watch: it ended within a second without any event');
      }
    } catch (error) {
      if (hung.signal.aborted && !this.stopped)
        throw new Error(`watch sent nothing for ${Math.round(idleMs / 1000)} s`, { cause: error });
      throw error;
    } finally {
      clearTimeout(watchdog);
      this.relistNow = undefined;
      if (Date.now() - opened >= HEALTHY_WATCH_MS) attempt.progressed = true;
    }
  }

  private applyEvent(line: string): void {
    const event = JSON.parse(line) as WatchEvent;
    const raw = event.object;
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED': {
        const key = this.keyOf(raw);
        if (key !== undefined) for (const sink of this.sinks) this.toSink(sink, 'put', () => sink.put(key, raw));
        if (!this.keepObjects) break;
        const stored = key === undefined ? undefined : this.toStored(key, raw);
        if (key !== undefined && stored) this.store.upsert(key, stored.value, stored.resourceVersion);
        // An object that changed into something unreadable must not live on in its last readable form.
        else if (key !== undefined) this.store.remove(key);
        break;
      }
      case 'DELETED': {
        const key = this.keyOf(raw);
        if (key !== undefined) for (const sink of this.sinks) this.toSink(sink, 'remove', () => sink.remove(key, raw));
        if (key !== undefined && this.keepObjects) this.store.remove(key);
        break;
      }
      case 'BOOKMARK':
        break;
      case 'ERROR':
        throw watchError(raw);
      default:
        throw new Error(`unexpected watch event type ${JSON.stringify(event.type)}`);
    }
    const resourceVersion = raw?.metadata?.resourceVersion;
    if (typeof resourceVersion === 'string' && resourceVersion) this.resourceVersion = resourceVersion;
  }

  private toStored(key: string, raw: unknown): StoredObject<T> | undefined {
    try {
      const resourceVersion = (raw as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion ?? '';
      return { value: this.options.transform(raw, key), resourceVersion };
    } catch (error) {
      this.log.warn('object skipped: it could not be read', { key, error: describeError(error) });
      return undefined;
    }
  }

  private emit(event: ChangeEvent, obj: T, old: T | undefined): void {
    for (const handler of [...this.handlers[event]]) this.call(() => handler(obj, old), event);
  }

  /** A sink that fails on one object is logged and goes on: it must not break the reflector or the other sinks. */
  private toSink(sink: ReflectorSink, step: string, deliver: () => void): void {
    try {
      deliver();
    } catch (error) {
      this.log.warn('object not taken by a sink', { step, error: describeError(error) });
    }
  }

  /** A failing handler is logged and skipped: it must not break the cache or the other handlers. */
  private call(handler: () => void, event: string): void {
    try {
      handler();
    } catch (error) {
      this.log.error('cache event handler failed', { event, error: describeError(error) });
    }
  }
}

function defaultKey(raw: unknown): string | undefined {
  const metadata = (raw as { metadata?: { name?: unknown; namespace?: unknown } } | null)?.metadata;
  if (typeof metadata?.name !== 'string' || !metadata.name) return undefined;
  // join() makes one flat string; a template literal would keep the namespace and name strings alive beside it
  return typeof metadata.namespace === 'string' && metadata.namespace
    ? [metadata.namespace, metadata.name].join('/')
    : metadata.name;
}

/** Answers of "watch cache behind" in a row that are waited out before a relist. */
const BEHIND_RETRIES = 5;

/**
 * kube-apiserver's 504 Timeout "Too large resource version" (cause ResourceVersionTooLarge): its watch cache is behind
 * the requested resourceVersion, as a request or as a watch ERROR event.
 */
function isWatchCacheBehind(error: unknown): boolean {
  if (error instanceof WatchCacheBehind) return true;
  if (!(error instanceof KubeApiError) || error.code !== 504) return false;
  const status = error.status;
  return (
    status?.details?.causes?.some((cause) => cause.reason === 'ResourceVersionTooLarge') === true ||
    /too large resource version/i.test(status?.message ?? error.message)
  );
}

/**
 * kube-apiserver (or etcd behind it) is down or refuses kapi's credentials, as against a lasting refusal of this
 * request (a 403, a 404 for a missing CRD), which must keep backing off however ready kube-apiserver is.
 */
function looksLikeOutage(error: unknown): boolean {
  return !(error instanceof KubeApiError) || error.code >= 500 || error.code === 401 || error.code === 429;
}

function retryAfterMs(error: unknown): number {
  const seconds = error instanceof KubeApiError ? error.status?.details?.retryAfterSeconds : undefined;
  return typeof seconds === 'number' && seconds > 0 ? Math.min(seconds, 10) * 1000 : 0;
}

class WatchCacheBehind extends Error {}

function isExpired(error: unknown): boolean {
  return error instanceof ResourceVersionExpired || (error instanceof KubeApiError && error.code === 410);
}

/** The Status of a watch ERROR event: 410 (Expired/Gone) means relist, anything else re-watch. */
function watchError(status: { code?: number; reason?: string; message?: string } | undefined): Error {
  const message = `watch error: ${status?.message ?? status?.reason ?? 'no details'}`;
  if (status?.code === 410 || status?.reason === 'Expired' || status?.reason === 'Gone') {
    return new ResourceVersionExpired(message);
  }
  if (status?.code === 504 && /too large resource version/i.test(status.message ?? '')) {
    return new WatchCacheBehind(message);
  }
  return new Error(`${message}${status?.code ? ` (code ${status.code})` : ''}`);
}
