import { randomBytes } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { KubeApiError, type KubeClient } from '../../kube/client.js';
import type { ReadinessCheck } from '../../kube/caches.js';
import type { Logger } from '../../observability/logger.js';

/** The HMAC key tokens are signed and verified with; `undefined` until it is loaded. */
export interface SigningKeyProvider {
  key(): Buffer | undefined;
}

/** HS256 wants a key at least as long as its output: 256 bits. */
export const MIN_KEY_BYTES = 32;
const SECRET_DATA_KEY = 'key';
const RETRY_MS = 5_000;

export type KeyFromSecret = { key: Buffer } | { problem: string };

/** Pure: the key in a Secret's `data.key`, or why it is unusable (never the key itself). */
export function keyFromSecret(secret: V1Secret | undefined, where: string): KeyFromSecret {
  if (!secret) return { problem: `Secret ${where} not found` };
  const encoded = secret.data?.[SECRET_DATA_KEY];
  if (!encoded) return { problem: `Secret ${where} has no data.${SECRET_DATA_KEY}` };
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_KEY_BYTES) {
    return {
      problem: `Secret ${where} data.${SECRET_DATA_KEY} holds ${key.length} bytes; at least ${MIN_KEY_BYTES} are required`,
    };
  }
  return { key };
}

export interface SecretSigningKeyOptions {
  client: KubeClient;
  logger: Logger;
  secret: { namespace: string; name: string };
  /** Sandbox only: with no usable Secret, sign with a random in-memory key (tokens die with the process). */
  allowGenerated: boolean;
}

/**
 * The signing key from the Secret every replica shares (so a token from one replica verifies on another). Until it
 * is loaded, `/readyz` fails with the reason and token requests are answered 503; loading is retried.
 */
export class SecretSigningKey implements SigningKeyProvider {
  readonly readiness: ReadinessCheck;
  private loaded: Buffer | undefined;
  private problem = 'not loaded yet';
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: SecretSigningKeyOptions) {
    this.readiness = { name: 'signing-key', notReadyReason: () => (this.loaded ? undefined : this.problem) };
  }

  key(): Buffer | undefined {
    return this.loaded;
  }

  /** One attempt now; on failure, retried in the background until it succeeds or `stop()`. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.attempt();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
  }

  private async attempt(): Promise<void> {
    const { client, logger, secret, allowGenerated } = this.options;
    const where = `${secret.namespace}/${secret.name}`;
    let result: KeyFromSecret;
    try {
      result = keyFromSecret(await this.readSecret(client, secret), where);
    } catch (err) {
      result = { problem: `reading Secret ${where} failed: ${err instanceof Error ? err.message : String(err)}` };
    }
    if ('key' in result) {
      this.loaded = result.key;
      logger.info('token signing key loaded', { secretName: where });
      return;
    }
    if (allowGenerated) {
      this.loaded = randomBytes(MIN_KEY_BYTES);
      logger.warn('token signing key generated in memory: tokens will not survive a restart', {
        reason: result.problem,
      });
      return;
    }
    this.problem = result.problem;
    logger.error('token signing key unavailable; retrying', { reason: result.problem, retryInMs: RETRY_MS });
    if (!this.stopped) {
      this.retry = setTimeout(() => void this.attempt(), RETRY_MS);
      this.retry.unref();
    }
  }

  private async readSecret(
    client: KubeClient,
    secret: { namespace: string; name: string },
  ): Promise<V1Secret | undefined> {
    try {
      return await client.request<V1Secret>({
        path: `/api/v1/namespaces/${encodeURIComponent(secret.namespace)}/secrets/${encodeURIComponent(secret.name)}`,
        timeoutMs: 10_000,
      });
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return undefined;
      throw err;
    }
  }
}
