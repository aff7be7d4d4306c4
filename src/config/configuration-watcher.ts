import { backoffDelay } from '../kube/backoff.js';
import type { ReadinessCheck } from '../kube/caches.js';
import { KubeApiError, type KubeClient } from '../kube/client.js';
import type { Logger } from '../observability/logger.js';
import {
  DEFAULT_AUTH_SETTINGS,
  parseClusterConfiguration,
  referencedSecretNames,
  type AuthSettings,
} from './cluster-configuration.js';
import { ConditionWriter } from './condition-writer.js';
import type { Verdict } from './configuration-conditions.js';
import { toConfigurationObject, type ClusterConfigurationObject } from './configuration-object.js';
import { ReferencedSecrets } from './referenced-secrets.js';
import { watchWithReflector, type WatchCollection, type WatchedCollection } from './watched-collection.js';

export type { ClusterConfigurationObject } from './configuration-object.js';

export interface ConfigurationWatcherOptions {
  client: KubeClient;
  logger: Logger;
  namespace: string;
  name: string;
  /** How collections are watched; a `Reflector` unless a test hands in fakes. */
  watch?: WatchCollection;
  /** Each new outcome of reading the configuration (the same events the log reports), e.g. for a metric. */
  onReload?: (result: ReloadResult) => void;
  /** A referenced Secret that cannot be read for this long makes the configuration invalid; default 10 s. */
  secretSyncTimeoutMs?: number;
}

/** applied: a valid object is in effect; invalid: refused (the last good one stays); defaults: no object. */
export type ReloadResult = 'applied' | 'invalid' | 'defaults';

/** Every client refused: what `current()` gives before any configuration is known, so nothing is open by accident. */
const NO_CLIENTS: AuthSettings = Object.freeze({ ...DEFAULT_AUTH_SETTINGS, clients: Object.freeze([]) });

type State =
  | { kind: 'waiting' }
  | { kind: 'missing' }
  | { kind: 'applied'; generation: number | undefined }
  | { kind: 'invalid'; error: string; keptLastGood: boolean };

/**
 * Watches one ClusterConfiguration (and the Secrets its `secretRef`s name) and publishes the authentication
 * settings as immutable snapshots: readers call `current()` per request and never see a half-applied change.
 *
 * - Any change is re-evaluated in the same tick it arrives (well under the 1 s the spec allows).
 * - A missing object (or a cluster without the CRD) means the defaults, with one warning per occurrence.
 * - An invalid object keeps the last good snapshot — the defaults count, when they were in effect because the
 *   object was missing — and says why in the log and in `status.conditions` (Valid/Ready False).
 *   A process that starts with an invalid object has no last good snapshot: it refuses every client and stays
 *   unready, so a rolling update stalls with the old replicas serving instead of falling back to the well-known
 *   default client.
 * - Status is written only when the conditions differ from the object's, so our own write (a MODIFIED event)
 *   does not cause another, and replicas that agree do not rewrite each other's.
 */
export class ConfigurationWatcher {
  readonly readiness: ReadinessCheck;
  private readonly log: Logger;
  private readonly configurations: WatchedCollection<ClusterConfigurationObject>;
  private readonly secrets: ReferencedSecrets;
  private readonly listeners = new Set<(settings: AuthSettings) => void>();
  private readonly stopping = new AbortController();
  private readonly key: string;
  private readonly objectPath: string;
  private settings: AuthSettings = NO_CLIENTS;
  private hasGood = false;
  private state: State = { kind: 'waiting' };
  private started = false;
  private crdMissing = false;
  private evaluationQueued = false;
  /** Set while referenced Secrets load; `expired` once they took longer than the timeout. */
  private secretsWait: { expired: boolean } | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private lastInvalidLogged: string | undefined;
  private readonly conditions: ConditionWriter;

  constructor(private readonly options: ConfigurationWatcherOptions) {
    const { namespace, name, client, logger } = options;
    this.key = `${namespace}/${name}`;
    this.log = logger.child({ component: 'cluster-configuration', configuration: this.key });
    const collectionPath = `/apis/installer.kapi.io/v1alpha1/namespaces/${encodeURIComponent(namespace)}/clusterconfigurations`;
    this.objectPath = `${collectionPath}/${encodeURIComponent(name)}`;
    this.conditions = new ConditionWriter({
      client,
      log: this.log,
      objectPath: this.objectPath,
      signal: this.stopping.signal,
      reevaluate: (ms) => (ms > 0 ? this.after(ms, () => this.schedule()) : this.schedule()),
    });
    const watch = options.watch ?? watchWithReflector;
    this.configurations = watch<ClusterConfigurationObject>({
      client,
      logger,
      name: `clusterconfiguration:${this.key}`,
      listPath: collectionPath,
      fieldSelector: `metadata.name=${name}`,
      transform: toConfigurationObject,
    });
    this.secrets = new ReferencedSecrets({ client, logger, namespace, watch, onChange: () => this.schedule() });
    const reevaluate = () => this.schedule();
    for (const event of ['added', 'modified', 'deleted'] as const) this.configurations.on(event, reevaluate);
    this.configurations.on('synced', reevaluate);
    this.readiness = { name: 'cluster-configuration', notReadyReason: () => this.notReadyReason() };
  }

  /** The settings in effect: a frozen snapshot, replaced (never changed) when the configuration changes. */
  current(): AuthSettings {
    return this.settings;
  }

  /** Called with each new snapshot; returns the unsubscribe function. */
  onChange(listener: (settings: AuthSettings) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(): void {
    if (this.started || this.stopping.signal.aborted) return;
    this.started = true;
    this.configurations.start();
    void this.detectMissingCrd();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([this.configurations.stop(), this.secrets.stop()]);
  }

  /** Coalesces the events of one tick (a relist delivers many) into one evaluation, still within milliseconds. */
  private schedule(): void {
    if (this.evaluationQueued || this.stopping.signal.aborted) return;
    this.evaluationQueued = true;
    queueMicrotask(() => {
      this.evaluationQueued = false;
      try {
        this.evaluate();
      } catch (error) {
        this.log.error('evaluating the configuration failed', { error: String((error as Error)?.message ?? error) });
      }
    });
  }

  private after(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  private evaluate(): void {
    if (this.stopping.signal.aborted) return;
    if (!this.configurations.synced && !this.crdMissing) return;
    const object = this.configurations.get(this.key);
    if (!object) {
      this.secretsWait = undefined;
      this.secrets.track(new Set());
      this.useDefaults();
      return;
    }
    this.secrets.track(referencedSecretNames(object));
    const unreadable = this.unreadableSecrets();
    if (unreadable === 'wait') return;
    const parsed = unreadable ? { error: unreadable } : parseClusterConfiguration(object, this.secrets.lookup);
    let verdict: Verdict;
    if ('settings' in parsed) {
      this.apply(parsed.settings, object);
      verdict = { valid: true };
    } else {
      this.reject(parsed.error, object);
      verdict = { valid: false, error: parsed.error };
    }
    void this.conditions.write(object, verdict);
  }

  /**
   * `undefined` when every referenced Secret is loaded; 'wait' while one is loading (the current snapshot is held,
   * so the Secret is not reported missing meanwhile); after the timeout, why they cannot be read.
   */
  private unreadableSecrets(): string | 'wait' | undefined {
    const pending = this.secrets.pending();
    if (pending.length === 0) {
      this.secretsWait = undefined;
      return undefined;
    }
    if (this.secretsWait === undefined) {
      const wait = { expired: false };
      this.secretsWait = wait;
      this.after(this.options.secretSyncTimeoutMs ?? 10_000, () => {
        wait.expired = true;
        this.schedule();
      });
    }
    if (!this.secretsWait.expired) return 'wait';
    return pending.map((p) => `secretRef: Secret "${p.name}" could not be read: ${p.reason}`).join('; ');
  }

  private useDefaults(): void {
    if (this.state.kind !== 'missing') {
      this.log.warn(
        this.crdMissing && !this.configurations.synced
          ? `the ClusterConfiguration CRD is not installed: using the defaults (client "kapi") until ${this.key} exists`
          : `ClusterConfiguration ${this.key} not found: using the defaults (client "kapi")`,
      );
      this.state = { kind: 'missing' };
      this.lastInvalidLogged = undefined;
      this.options.onReload?.('defaults');
    }
    this.publish(DEFAULT_AUTH_SETTINGS);
  }

  private apply(settings: AuthSettings, object: ClusterConfigurationObject): void {
    const generation = object.metadata.generation;
    const changed = this.publish(settings);
    if (changed || this.state.kind !== 'applied' || this.state.generation !== generation) {
      this.log.info('configuration applied', { generation, ...summary(settings) });
      this.options.onReload?.('applied');
    }
    this.state = { kind: 'applied', generation };
    this.lastInvalidLogged = undefined;
  }

  private reject(error: string, object: ClusterConfigurationObject): void {
    this.state = { kind: 'invalid', error, keptLastGood: this.hasGood };
    const generation = object.metadata.generation;
    const logKey = `${generation}:${error}`;
    if (this.lastInvalidLogged === logKey) return;
    this.lastInvalidLogged = logKey;
    this.options.onReload?.('invalid');
    if (this.hasGood) {
      this.log.warn('configuration is invalid: keeping the last good configuration', { generation, reason: error });
    } else {
      this.log.error('configuration is invalid and no earlier configuration is loaded: every client is refused', {
        generation,
        reason: error,
      });
    }
  }

  /** Replaces the snapshot when it differs; returns whether it did. */
  private publish(settings: AuthSettings): boolean {
    this.hasGood = true;
    if (this.settings !== NO_CLIENTS && sameSettings(this.settings, settings)) return false;
    this.settings = settings;
    for (const listener of [...this.listeners]) {
      try {
        listener(settings);
      } catch (error) {
        this.log.error('configuration listener failed', { error: String((error as Error)?.message ?? error) });
      }
    }
    return true;
  }

  /** A 404 on the list means the CRD is not installed: the defaults apply while the reflector keeps retrying. */
  private async detectMissingCrd(): Promise<void> {
    for (let attempt = 1; !this.configurations.synced && !this.stopping.signal.aborted; attempt++) {
      try {
        await this.options.client.request({
          path: this.objectPath.slice(0, this.objectPath.lastIndexOf('/')),
          query: { fieldSelector: `metadata.name=${this.options.name}`, limit: 1 },
          signal: this.stopping.signal,
          timeoutMs: 10_000,
        });
        return; // the collection exists: the reflector will sync
      } catch (error) {
        if (error instanceof KubeApiError && error.code === 404) {
          this.crdMissing = true;
          this.schedule();
          return;
        }
      }
      await new Promise<void>((resolve) =>
        this.after(backoffDelay(attempt, { initialMs: 1_000, maxMs: 30_000 }), resolve),
      );
    }
  }

  private notReadyReason(): string | undefined {
    if (this.stopping.signal.aborted) return 'stopped';
    switch (this.state.kind) {
      case 'missing':
      case 'applied':
        return undefined;
      case 'invalid':
        if (this.state.keptLastGood) return undefined;
        return `ClusterConfiguration ${this.key} is invalid and no earlier configuration is loaded: ${this.state.error}`;
      case 'waiting': {
        const pending = this.secrets.pending().map((p) => `Secret "${p.name}": ${p.reason}`);
        if (pending.length > 0) return `waiting for ${pending.join('; ')}`;
        return `waiting for ClusterConfiguration ${this.key}: ${this.configurations.readiness.notReadyReason() ?? 'not evaluated yet'}`;
      }
    }
  }
}

function sameSettings(a: AuthSettings, b: AuthSettings): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** What a log line may say about settings: no secret, only names and numbers. */
function summary(settings: AuthSettings): Record<string, unknown> {
  return {
    clients: settings.clients.map((c) => `${c.name} (${c.public ? 'public; ' : ''}${c.grantTypes.join(', ')})`),
    accessTokenMaxAgeSeconds: settings.accessTokenMaxAgeSeconds,
    refreshTokenMaxAgeSeconds: settings.refreshTokenMaxAgeSeconds,
    multipleLogin: settings.multipleLogin,
    maxSessionsPerUser: settings.maxSessionsPerUser,
    loginLimit: settings.loginLimit,
    identityProviders: settings.identityProviders.map((p) => `${p.name} (${p.type}, ${p.mappingMethod})`),
  };
}
