import type { ReadinessCheck } from '../kube/caches.js';
import { Reflector, type ReflectorOptions } from '../kube/reflector.js';
import type { ChangeEvent, ChangeHandler } from '../kube/object-store.js';

/** The part of `Reflector` the configuration watcher uses, so tests can hand it in-memory collections. */
export interface WatchedCollection<T> {
  readonly readiness: ReadinessCheck;
  readonly synced: boolean;
  get(key: string): T | undefined;
  list(): readonly T[];
  on(event: ChangeEvent, handler: ChangeHandler<T>): () => void;
  on(event: 'synced', handler: () => void): () => void;
  start(): void;
  stop(): Promise<void>;
}

export type WatchCollection = <T>(options: ReflectorOptions<T>) => WatchedCollection<T>;

export const watchWithReflector: WatchCollection = (options) => new Reflector(options);
