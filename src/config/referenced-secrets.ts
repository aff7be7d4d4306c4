import type { KubeClient } from '../kube/client.js';
import type { Logger } from '../observability/logger.js';
import type { SecretLookup } from './cluster-configuration.js';
import type { WatchCollection, WatchedCollection } from './watched-collection.js';

type SecretData = Readonly<Record<string, string>>;

export interface ReferencedSecretsOptions {
  client: KubeClient;
  logger: Logger;
  namespace: string;
  watch: WatchCollection;
  /** Called after any watched Secret changed or first synced. */
  onChange: () => void;
}

/**
 * The Secrets a ClusterConfiguration's `secretRef`s name, each watched on its own (`fieldSelector=metadata.name=…`).
 *
 * Why one small watch per referenced Secret rather than one over the namespace: kapi-system also holds the JWT
 * signing key, TLS keys and Helm's release Secrets (large, many revisions); a namespace-wide cache would keep all
 * of them in memory to use one or two values. A label selector would need every referenced Secret to be labelled,
 * which fails silently when someone forgets. A configuration names at most 16 clients and 8 identity providers (each
 * with a bind password or client secret and a CA bundle), so at most 32 watches.
 */
export class ReferencedSecrets {
  private readonly watched = new Map<string, { collection: WatchedCollection<SecretData>; unsubscribe: () => void }>();

  constructor(private readonly options: ReferencedSecretsOptions) {}

  /** Watches exactly `names`: starts watches for new names and stops those no longer referenced. */
  track(names: ReadonlySet<string>): void {
    for (const [name, entry] of this.watched) {
      if (names.has(name)) continue;
      this.watched.delete(name);
      entry.unsubscribe();
      void entry.collection.stop();
    }
    for (const name of names) {
      if (this.watched.has(name)) continue;
      const collection = this.options.watch<SecretData>({
        client: this.options.client,
        logger: this.options.logger,
        name: `secret:${this.options.namespace}/${name}`,
        listPath: `/api/v1/namespaces/${encodeURIComponent(this.options.namespace)}/secrets`,
        fieldSelector: `metadata.name=${name}`,
        transform: decodeSecretData,
      });
      const notify = () => this.options.onChange();
      const offs = [
        collection.on('added', notify),
        collection.on('modified', notify),
        collection.on('deleted', notify),
        collection.on('synced', notify),
      ];
      this.watched.set(name, { collection, unsubscribe: () => offs.forEach((off) => off()) });
      collection.start();
    }
  }

  /** Referenced Secrets whose watch has not delivered its first list yet, with the reason. */
  pending(): { name: string; reason: string }[] {
    return [...this.watched]
      .filter(([, entry]) => !entry.collection.synced)
      .map(([name, entry]) => ({ name, reason: entry.collection.readiness.notReadyReason() ?? 'not synced yet' }));
  }

  /** Only meaningful once `pending()` is empty: before that, an unsynced Secret reads as missing. */
  readonly lookup: SecretLookup = (name) => this.watched.get(name)?.collection.list()[0];

  async stop(): Promise<void> {
    const entries = [...this.watched.values()];
    this.watched.clear();
    for (const entry of entries) entry.unsubscribe();
    await Promise.all(entries.map((entry) => entry.collection.stop()));
  }
}

/** Keeps only the decoded values: a Secret's metadata (annotations can be large) is not needed. */
function decodeSecretData(raw: { data?: Record<string, unknown> }): SecretData {
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw?.data ?? {})) {
    if (typeof value === 'string') data[key] = Buffer.from(value, 'base64').toString('utf8');
  }
  return Object.freeze(data);
}
