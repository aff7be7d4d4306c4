import { createLogger, type Logger } from '../../src/observability/logger.js';
import type { WatchCollection, WatchedCollection } from '../../src/config/watched-collection.js';
import { KubeApiError, type KubeClient, type KubeRequest } from '../../src/kube/client.js';
import type { ChangeEvent, ChangeHandler } from '../../src/kube/object-store.js';
import type { ReflectorOptions } from '../../src/kube/reflector.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- fakes hold plain JSON */

/** An in-memory stand-in for a Reflector: the test decides when it syncs and what changes. */
export class FakeCollection<T> implements WatchedCollection<T> {
  synced = false;
  started = false;
  stopped = false;
  notSyncedReason = 'not synced yet';
  readonly readiness = {
    name: 'fake',
    notReadyReason: () => (this.synced ? undefined : this.notSyncedReason),
  };
  private readonly items = new Map<string, T>();
  private readonly handlers = new Map<string, Set<(...args: any[]) => void>>();

  constructor(readonly options: ReflectorOptions<T>) {}

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): readonly T[] {
    return [...this.items.values()];
  }

  on(event: ChangeEvent, handler: ChangeHandler<T>): () => void;
  on(event: 'synced', handler: () => void): () => void;
  on(event: string, handler: (...args: any[]) => void): () => void {
    const set = this.handlers.get(event) ?? new Set();
    this.handlers.set(event, set);
    set.add(handler);
    return () => set.delete(handler);
  }

  start(): void {
    this.started = true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
  }

  /** Delivers the first list: raw objects go through the collection's transform, as a Reflector does. */
  sync(raws: any[] = []): void {
    for (const raw of raws) this.items.set(this.keyOf(raw), this.options.transform(raw, this.keyOf(raw)));
    this.synced = true;
    this.emit('synced');
  }

  put(raw: any): void {
    const key = this.keyOf(raw);
    const old = this.items.get(key);
    const value = this.options.transform(raw, key);
    this.items.set(key, value);
    this.emit(old ? 'modified' : 'added', value, old);
  }

  remove(raw: any): void {
    const key = this.keyOf(raw);
    const old = this.items.get(key);
    if (!old) return;
    this.items.delete(key);
    this.emit('deleted', old, old);
  }

  get handlerCount(): number {
    return [...this.handlers.values()].reduce((n, set) => n + set.size, 0);
  }

  private keyOf(raw: any): string {
    const { namespace, name } = raw.metadata;
    return namespace ? `${namespace}/${name}` : name;
  }

  private emit(event: string, ...args: any[]): void {
    for (const handler of [...(this.handlers.get(event) ?? [])]) handler(...args);
  }
}

/** Records every collection the watcher asks for, by `listPath?fieldSelector`. */
export class FakeWatches {
  readonly created: FakeCollection<any>[] = [];

  readonly watch: WatchCollection = <T>(options: ReflectorOptions<T>) => {
    const collection = new FakeCollection<T>(options);
    this.created.push(collection);
    return collection;
  };

  find(fieldSelector: string, listPathPart: string): FakeCollection<any> | undefined {
    return this.created
      .filter((c) => c.options.fieldSelector === fieldSelector && c.options.listPath.includes(listPathPart))
      .at(-1);
  }
}

type Responder = (req: KubeRequest) => Promise<unknown>;

/** A KubeClient whose answers the test scripts; every request is recorded. */
export class FakeClient {
  readonly requests: KubeRequest[] = [];
  constructor(public respond: Responder) {}

  request = async <T>(req: KubeRequest): Promise<T> => {
    this.requests.push(req);
    return (await this.respond(req)) as T;
  };

  get patches(): KubeRequest[] {
    return this.requests.filter((r) => r.method === 'PATCH');
  }

  asKubeClient(): KubeClient {
    return this as unknown as KubeClient;
  }
}

export function notFound(): KubeApiError {
  return new KubeApiError(404, undefined, 'the server could not find the requested resource');
}

/** A logger whose JSON lines the test can read. */
export function capturingLogger(): { logger: Logger; lines: Array<Record<string, any>> } {
  const lines: Array<Record<string, any>> = [];
  const logger = createLogger('debug', { sink: (line) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** Lets queued microtasks, resolved promises and immediate callbacks run. */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Polls `check` until it returns true. No deadline of its own: the test's timeout is the only limit, as a busy
 * machine is slow, not wrong.
 */
export async function eventually(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** A real certificate (a throwaway self-signed CA) for the `caSecretRef`s of the configuration tests. */
export const CA_PEM = `-----BEGIN CERTIFICATE-----
MIIBezCCASGgAwIBAgIUOcL1+EVh9lyRF30I46e7jD4AnbAwCgYIKoZIzj0EAwIw
EjEQMA4GA1UEAwwHdGVzdC1jYTAgFw0yNjExMjUwNDQ2MzdaGA8yMTI2MTEwMTA0
NDYzN1owEjEQMA4GA1UEAwwHdGVzdC1jYTBZMBMGByqGSM49AgEGCCqGSM49AwEH
A0IABCctHig4Z5Na5UezWbQWnlIdDcaLd640/xeGv7H2bldAIc8Sti+Ekaqv4KNK
JUmgXYh6uWdDvvmuZ1XIIXd7TaCjUzBRMB0GA1UdDgQWBBRQlAieWhiXPS67QLgA
oRnQ99sb2DAfBgNVHSMEGDAWgBRQlAieWhiXPS67QLgAoRnQ99sb2DAPBgNVHRMB
Af8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIQDJ+qUyMwmtdbMEZWE80I27Ito/
JRUHqLioPKqj1tmF1QIgaSiO6WXer7j2sIkMS+2t862015vZj9XQYfureGiVseU=
-----END CERTIFICATE-----`;
