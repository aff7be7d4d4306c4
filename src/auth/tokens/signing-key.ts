import { randomBytes } from 'node:crypto';
import type { ReadinessCheck } from '../../kube/caches.js';
import type { KubeClient } from '../../kube/client.js';
import { Reflector } from '../../kube/reflector.js';
import type { Logger } from '../../observability/logger.js';
import { MIN_HMAC_KEY_BYTES, hmacKeySet, keySetFromSecretData, type KeySet } from './key-set.js';

/** The keys tokens are signed and verified with; `undefined` until they are loaded. */
export interface SigningKeyProvider {
  keys(): KeySet | undefined;
}

export interface SecretSigningKeyOptions {
  client: KubeClient;
  logger: Logger;
  secret: { namespace: string; name: string };
  /** Sandbox only: with no usable Secret, sign with a random in-memory key (tokens die with the process). */
  allowGenerated: boolean;
  /** How long `start()` waits for the first read of the Secret; default 10 s. */
  startTimeoutMs?: number;
}

type SecretData = Readonly<Record<string, string>>;

/**
 * The key set from the Secret every replica shares (so a token from one replica verifies on another), watched: a key
 * added, made active or removed applies on every replica as soon as the watch delivers it, without a restart.
 *
 * A Secret that turns invalid or is deleted keeps the last good set in use (logging out every user because of a
 * typo would be worse), and the log says why. Until a set is first loaded, `/readyz` fails with the reason and token
 * requests are answered 503.
 */
export class SecretSigningKey implements SigningKeyProvider {
  readonly readiness: ReadinessCheck;
  private loaded: KeySet | undefined;
  private problem = 'not loaded yet';
  private readonly secretWatch: Reflector<SecretData>;
  private readonly where: string;
  private readonly log: Logger;

  constructor(private readonly options: SecretSigningKeyOptions) {
    const { namespace, name } = options.secret;
    this.where = `${namespace}/${name}`;
    this.log = options.logger.child({ component: 'signing-keys' });
    this.secretWatch = new Reflector<SecretData>({
      client: options.client,
      logger: options.logger,
      name: `secret:${this.where}`,
      listPath: `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`,
      fieldSelector: `metadata.name=${name}`,
      // only the data is kept, still base64: the key set decodes what it uses
      transform: (raw: { data?: Record<string, unknown> }) =>
        Object.freeze(
          Object.fromEntries(
            Object.entries(raw?.data ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
          ),
        ),
    });
    const reload = () => this.reload();
    for (const event of ['added', 'modified', 'deleted'] as const) this.secretWatch.on(event, reload);
    this.secretWatch.on('synced', reload);
    this.readiness = {
      name: 'signing-key',
      notReadyReason: () => {
        if (this.loaded) return undefined;
        const watch = this.secretWatch.readiness.notReadyReason();
        return watch && !this.secretWatch.synced ? `${this.problem} (${watch})` : this.problem;
      },
    };
  }

  keys(): KeySet | undefined {
    return this.loaded;
  }

  /** Starts the watch; resolves once the Secret was read (or the start timeout passed: readiness then says why). */
  async start(): Promise<void> {
    this.secretWatch.start();
    await this.secretWatch.waitForSync(this.options.startTimeoutMs ?? 10_000).catch((err: unknown) => {
      this.log.error('token signing keys not loaded yet; retrying', { secretName: this.where, error: String(err) });
    });
  }

  async stop(): Promise<void> {
    await this.secretWatch.stop();
  }

  private reload(): void {
    if (!this.secretWatch.synced) return;
    const data = this.secretWatch.list()[0];
    if (!data) {
      this.missing(`Secret ${this.where} not found`);
      return;
    }
    const result = keySetFromSecretData(data, this.where);
    if ('problems' in result) {
      this.unusable(result.problems.join('; '));
      return;
    }
    if (result.keys.fingerprint === this.loaded?.fingerprint) return;
    const first = !this.loaded;
    this.loaded = result.keys;
    this.log.info(first ? 'token signing keys loaded' : 'token signing keys changed', {
      secretName: this.where,
      kids: [...result.keys.byKid.keys()],
      active: result.keys.active.kid,
      algorithm: result.keys.active.algorithm,
    });
  }

  private missing(problem: string): void {
    if (!this.loaded && this.options.allowGenerated) {
      this.loaded = hmacKeySet(randomBytes(MIN_HMAC_KEY_BYTES), 'generated');
      this.log.warn('token signing key generated in memory: tokens will not survive a restart', { reason: problem });
      return;
    }
    this.unusable(problem);
  }

  private unusable(problem: string): void {
    this.problem = problem;
    if (this.loaded) {
      this.log.error('token signing keys unusable; the last good keys stay in use', { reason: problem });
    } else {
      this.log.error('token signing keys unavailable; waiting for the Secret to change', { reason: problem });
    }
  }
}
