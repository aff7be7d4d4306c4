import type { WebSocket } from 'ws';
import type { Exchange } from './exchange.js';
import type { StoreEvent } from './history.js';
import type { ListOptions } from './list-options.js';
import { matchesFilter } from './object-filter.js';
import type { ResourceType } from './resource-types.js';
import { expired } from './status.js';
import type { ObjectStore } from './store.js';
import { typeHeader } from './stored-object.js';
import { bookmarkLine, deliveryFor, eventLine, watchLine, type Watcher, type WatchHub } from './watch-hub.js';

/**
 * A watch over HTTP, as kube-apiserver streams it: newline-delimited `{"type","object"}` events in one chunked 200
 * response. The start point follows the resourceVersion rules (""/"0": synthetic ADDED for the current state; N:
 * every change after N, or one ERROR 410 event when N is older than the history); sendInitialEvents streams the
 * state then a bookmark marked `k8s.io/initial-events-end`. Replay and registration happen in one tick, so no event
 * is lost or repeated between them.
 */
export interface WatchDeps {
  store: ObjectStore;
  hub: WatchHub;
}

/** A watch with no timeoutSeconds ends after 30-60 minutes, as kube's min-request-timeout spreads them. */
const DEFAULT_TIMEOUT_SECONDS = 1800;
/** A client this far behind is cut off, as kube drops watchers that cannot keep up. */
const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;

/**
 * Where a watch's events go: one chunked HTTP response (newline-delimited JSON), or a WebSocket (one event a
 * message), as kube-apiserver serves a watch over either.
 */
export interface WatchSink {
  /** The stream begins: the 200 head of an HTTP answer; a WebSocket is open already. */
  start(): void;
  /** One or more whole event lines. */
  write(lines: string): void;
  /** What is written and not yet taken by the client. */
  readonly buffered: number;
  end(): void;
  destroy(): void;
  onClose(listener: () => void): void;
}

export function httpWatchSink(x: Exchange): WatchSink {
  const res = x.res;
  return {
    start: () => x.startStream(200, 'application/json'),
    write: (lines) => void res.write(lines),
    get buffered() {
      return res.writableLength;
    },
    end: () => res.end(),
    destroy: () => res.destroy(),
    onClose: (listener) => void res.on('close', listener),
  };
}

/** A WebSocket watch: each event its own text message, as kube-apiserver's watch handler sends them. */
export function websocketWatchSink(ws: WebSocket): WatchSink {
  return {
    start: () => undefined,
    write(lines) {
      let from = 0;
      for (let end = lines.indexOf('\n'); end >= 0; end = lines.indexOf('\n', from)) {
        ws.send(lines.slice(from, end + 1));
        from = end + 1;
      }
    },
    get buffered() {
      return ws.bufferedAmount;
    },
    end: () => ws.close(1000),
    destroy: () => ws.terminate(),
    onClose: (listener) => void ws.on('close', listener),
  };
}

export function serveWatch(
  x: Exchange,
  deps: WatchDeps,
  type: ResourceType,
  version: string,
  namespace: string,
  options: ListOptions,
): void {
  serveWatchTo(httpWatchSink(x), deps, type, version, namespace, options);
}

export function serveWatchTo(
  out: WatchSink,
  deps: WatchDeps,
  type: ResourceType,
  version: string,
  namespace: string,
  options: ListOptions,
): void {
  const collection = deps.store.collection(type);
  const prefix = namespace ? `${namespace}/` : '';
  const { resourceVersion, sendInitialEvents } = options;
  const fromNow = resourceVersion === '' || resourceVersion === '0';
  const initialState = sendInitialEvents === true || (sendInitialEvents === undefined && fromNow);

  let replay: StoreEvent[] = [];
  if (!initialState && !fromNow) {
    const from = Number(resourceVersion);
    if (!collection.history.covers(from)) {
      // kube answers 200 and reports the expiry as the stream's only event.
      out.start();
      const status = expired(`too old resource version: ${from} (${collection.history.floor})`).toStatus();
      out.write(watchLine('ERROR', JSON.stringify(status)));
      out.end();
      return;
    }
    replay = collection.history.since(from);
  }

  out.start();
  let open = true;
  let timer: NodeJS.Timeout | undefined = undefined;
  const watcher: Watcher = {
    type,
    version,
    namespace,
    filter: options.filter,
    bookmarks: options.allowWatchBookmarks,
    send(line) {
      if (!open) return;
      out.write(line);
      if (out.buffered > MAX_BUFFERED_BYTES) watcher.close(true);
    },
    close(abrupt) {
      if (!open) return;
      open = false;
      clearTimeout(timer);
      deps.hub.remove(watcher);
      if (abrupt) out.destroy();
      else out.end();
    },
  };

  if (initialState) {
    const header = typeHeader(type, version);
    let batch = '';
    const keys = collection.sortedKeys();
    for (let i = collection.lowerBound(prefix); i < keys.length; i++) {
      const key = keys[i] as string;
      if (!key.startsWith(prefix)) break;
      const object = collection.get(key);
      if (!object || !matchesFilter(options.filter, object)) continue;
      batch += watchLine('ADDED', header + object.body);
      if (batch.length > 256 * 1024) {
        out.write(batch);
        batch = '';
      }
    }
    if (batch) out.write(batch);
    if (sendInitialEvents === true) out.write(bookmarkLine(type, version, deps.store.currentRv, true));
  }
  for (const event of replay) {
    if (namespace && event.object.namespace !== namespace) continue;
    const delivery = deliveryFor(event, options.filter);
    if (delivery) out.write(eventLine(event, delivery, version));
  }
  deps.hub.add(watcher);

  const seconds = options.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS * (1 + Math.random());
  timer = setTimeout(() => watcher.close(false), seconds * 1000);
  timer.unref();
  out.onClose(() => watcher.close(false));
}
