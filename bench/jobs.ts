/**
 * What the main thread asks a load worker to do, and what comes back. Plain data only: jobs cross a worker_threads
 * boundary (structured clone), so operations are described, never passed as functions.
 */

/** One HTTP request, repeated. `expect` is the status every answer must have (others count as errors). */
export interface RequestOperation {
  kind: 'request';
  /** http (kapi) or https (the backend, with the thread's backend trust). */
  url: string;
  method?: 'GET' | 'POST';
  /** A list value is sent as that many headers of the name (Impersonate-Group). */
  headers?: Record<string, string | string[]>;
  body?: string;
  /** Bodies sent in turn (each caller starts at its own), e.g. logins of many users; `body` when absent. */
  bodies?: string[];
  expect: number;
}

/**
 * The direct path to a node page, as a user does it without kapi: list every matching Node from kube-apiserver
 * (`pageSize` at a time, 0 = unpaged), then sort by name and take the first `take`, client-side.
 */
export interface DirectNodePageOperation {
  kind: 'direct-node-page';
  /** kube-apiserver base URL. */
  server: string;
  headers: Record<string, string>;
  labelSelector: string;
  pageSize: number;
  take: number;
  /** kapi's `sortBy=name` without `ascending` is descending (KubeSphere's default); the direct path matches it. */
  descending: boolean;
}

export type Operation = RequestOperation | DirectNodePageOperation;

/** A closed loop: `concurrency` callers, each sending the next operation as soon as the previous one finished. */
export interface LoadJob {
  kind: 'load';
  operation: Operation;
  concurrency: number;
  /** Run, unmeasured, for this long first (connections opened, JIT warm, caches hot). */
  warmupMs: number;
  durationMs: number;
  /** Processes whose CPU time is read at the start and end of the measured window, by role. */
  cpuPids?: Record<string, number>;
  /**
   * Each caller starts a request at most once per this many milliseconds (waiting, uncounted, when an answer came
   * sooner): the backend then sees requests at the rate another run had, e.g. one through a proxy.
   */
  intervalMs?: number;
}

export interface LoadResult {
  /** Operations completed inside the measured window, and their latencies in nanoseconds. */
  latenciesNs: number[];
  errors: number;
  /** The measured errors by the status that came instead of the expected one ("no answer" for a socket error). */
  errorsByStatus?: Record<string, number>;
  /** The first error seen, for the report (status code and a short body, or the socket error). */
  firstError?: string;
  elapsedMs: number;
  /** CPU milliseconds each of `cpuPids` spent in the measured window (the window's operations are `latenciesNs`). */
  cpuMs: Record<string, number>;
}

/**
 * Watch relay: the same node watch opened through kapi and directly; a node's label is patched `patches` times,
 * one at a time, and the arrival of each event on both streams is timed.
 */
export interface WatchRelayJob {
  kind: 'watch-relay';
  kapiUrl: string;
  kapiToken: string;
  /**
   * The second watch's own headers instead of kapi's token: with `kapiUrl` the backend itself, two direct watches,
   * whose difference is what the backend and the client add between two streams of the same event, with no proxy.
   */
  secondHeaders?: Record<string, string>;
  /** The backend (the sandbox or kube-apiserver). */
  sandboxUrl: string;
  /** Who the direct watch is (kapi's own identity). */
  directHeaders: Record<string, string>;
  /** Who may patch nodes (the sandbox admin, or the kit's). */
  patchHeaders: Record<string, string>;
  nodeName: string;
  patches: number;
  timeoutMs: number;
}

export interface WatchRelayResult {
  /** Per event: arrival through kapi minus arrival on the direct watch. */
  addedNs: number[];
  /** Per event: patch sent → arrival on the direct watch (the sandbox's own latency, for context). */
  directNs: number[];
  missed: number;
}

/** `watches` watches held through kapi; one patch; how many receive it, and how fast. */
export interface WatchFanoutJob {
  kind: 'watch-fanout';
  kapiUrl: string;
  kapiToken: string;
  sandboxUrl: string;
  patchHeaders: Record<string, string>;
  nodeName: string;
  watches: number;
  timeoutMs: number;
}

export interface WatchFanoutResult {
  opened: number;
  openFailures: number;
  firstOpenError?: string;
  openMs: number;
  delivered: number;
  /** Patch sent → the last watch received the event (or the timeout, when some never did). */
  allDeliveredMs: number | undefined;
  /** Per watch: patch sent → event received. */
  deliveryNs: number[];
  /** Watches that ended, broke or got an ERROR event after opening. */
  streamFailures: number;
  firstStreamFailure?: string;
}

export type Job = LoadJob | WatchRelayJob | WatchFanoutJob;

export type ResultOf<J extends Job> = J extends LoadJob
  ? LoadResult
  : J extends WatchRelayJob
    ? WatchRelayResult
    : WatchFanoutResult;

/** Worker → main thread. `ready` is sent by long jobs once their set-up is done (e.g. every watch opened). */
export type WorkerMessage =
  { type: 'ready' } | { type: 'result'; result: unknown } | { type: 'error'; message: string };

/** Main thread → worker, for jobs that wait for a go-ahead after `ready`. */
export type MainMessage = { type: 'go' };
