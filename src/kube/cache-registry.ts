/**
 * The watched caches of one server, for metrics: each cache registers itself under the KubeClient it reads through
 * (one per server, so servers sharing a process — tests, replicas — keep their caches apart) and leaves on stop.
 */
export interface CacheState {
  readonly name: string;
  readonly synced: boolean;
  /** When the cache last heard from kube-apiserver (ms since the epoch): a list, a watch opened, an event. */
  readonly lastEventAt: number | undefined;
}

const caches = new WeakMap<object, Set<CacheState>>();

export function registerCache(client: object, cache: CacheState): () => void {
  let set = caches.get(client);
  if (!set) caches.set(client, (set = new Set()));
  set.add(cache);
  return () => void set.delete(cache);
}

export function cachesOf(client: object): readonly CacheState[] {
  return [...(caches.get(client) ?? [])];
}
