import { createHash } from 'node:crypto';
import { KubeApiError, type KubeClient } from '../../kube/client.js';
import type { ReadinessCheck } from '../../kube/caches.js';
import { Reflector } from '../../kube/reflector.js';
import type { Logger } from '../../observability/logger.js';

/**
 * Users' password hashes (SPEC §17): one Secret per local user in kapi's own namespace, which only kapi (and
 * cluster-admin) reads, so no hash is in a User object, where anyone who may list Users (through `/apis`, a watch, or
 * kubectl straight to kube-apiserver) would read it. A Secret holds the bcrypt hash of one user, the user's name in an
 * annotation and the User's uid in another: a hash left behind by a deleted user never opens the account of a new
 * user of the same name. Its owner reference to the User lets a garbage collector remove it with the User (kapi's
 * user cleanup does anyway).
 */

export const PASSWORD_LABEL = 'iam.kapi.io/password';
export const PASSWORD_USER_ANNOTATION = 'iam.kapi.io/user';
export const PASSWORD_USER_UID_ANNOTATION = 'iam.kapi.io/user-uid';
export const PASSWORD_SECRET_TYPE = 'iam.kapi.io/password';
const HASH_KEY = 'bcrypt';
const MAX_NAME = 253;
const TIMEOUT_MS = 10_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/** The Secret of a user's hash: `password-<user>`, or a digest of the name where that would be too long. */
export function passwordSecretName(user: string): string {
  const plain = `password-${user}`;
  return plain.length <= MAX_NAME ? plain : `password-${createHash('sha256').update(user).digest('hex').slice(0, 40)}`;
}

export interface StoredHash {
  user: string;
  /** The uid of the User it is the password of; absent when it was written without one (the chart's admin). */
  userUid?: string;
  hash: string;
}

/** A password Secret read (pure); undefined when it is not one. */
export function storedHashFrom(raw: Raw): StoredHash | undefined {
  const annotations = raw?.metadata?.annotations ?? {};
  const user = annotations[PASSWORD_USER_ANNOTATION];
  const encoded = raw?.data?.[HASH_KEY];
  if (typeof user !== 'string' || user === '' || typeof encoded !== 'string') return undefined;
  const hash = Buffer.from(encoded, 'base64').toString('utf8');
  if (!hash.startsWith('$2')) return undefined;
  const uid = annotations[PASSWORD_USER_UID_ANNOTATION];
  return { user, hash, ...(typeof uid === 'string' && uid !== '' && { userUid: uid }) };
}

/** The Secret holding `hash` as the password of the User `user` (uid `uid`), in `namespace` (pure). */
export function passwordSecret(namespace: string, user: string, uid: string, hash: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: PASSWORD_SECRET_TYPE,
    metadata: {
      name: passwordSecretName(user),
      namespace,
      labels: { [PASSWORD_LABEL]: 'bcrypt', 'app.kubernetes.io/managed-by': 'kapi-apiserver' },
      annotations: { [PASSWORD_USER_ANNOTATION]: user, [PASSWORD_USER_UID_ANNOTATION]: uid },
      ownerReferences: [
        { apiVersion: 'iam.kapi.io/v1beta1', kind: 'User', name: user, uid, blockOwnerDeletion: false },
      ],
    },
    data: { [HASH_KEY]: Buffer.from(hash, 'utf8').toString('base64') },
  };
}

/** Whether a stored hash is the password of this User (pure): its name, and its uid when the Secret names one. */
export const hashBelongsTo = (stored: StoredHash | undefined, user: { name: string; uid?: string }) =>
  stored !== undefined && stored.user === user.name && (stored.userUid === undefined || stored.userUid === user.uid);

/**
 * The password Secrets of kapi's namespace, watched: a login finds its user's hash in memory; one the watch has not
 * brought yet (a password set a moment ago on another replica) is read by its name.
 */
export class PasswordHashes {
  private readonly reflector: Reflector<StoredHash | undefined>;
  private readonly byUser = new Map<string, StoredHash>();
  private readonly collection: string;

  constructor(
    private readonly client: KubeClient,
    logger: Logger,
    private readonly namespace: string,
  ) {
    this.collection = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`;
    this.reflector = new Reflector<StoredHash | undefined>({
      client,
      logger,
      name: 'password-hashes',
      listPath: this.collection,
      labelSelector: PASSWORD_LABEL,
      transform: storedHashFrom,
    });
    const index = (stored: StoredHash | undefined) => stored && this.byUser.set(stored.user, stored);
    const unindex = (stored: StoredHash | undefined) => {
      if (stored && this.byUser.get(stored.user) === stored) this.byUser.delete(stored.user);
    };
    this.reflector.on('added', index);
    this.reflector.on('modified', (stored, old) => {
      unindex(old);
      index(stored);
    });
    this.reflector.on('deleted', unindex);
  }

  get readiness(): ReadinessCheck {
    return this.reflector.readiness;
  }

  start(): void {
    this.reflector.start();
  }

  waitForSync(timeoutMs: number): Promise<void> {
    return this.reflector.waitForSync(timeoutMs);
  }

  stop(): Promise<void> {
    return this.reflector.stop();
  }

  /** The user's hash: from the watch, else read by name; undefined when it has none. */
  async hashOf(user: { name: string; uid?: string }): Promise<string | undefined> {
    const cached = this.byUser.get(user.name);
    if (hashBelongsTo(cached, user)) return cached?.hash;
    const read = await this.client
      .request<Raw>({
        path: `${this.collection}/${encodeURIComponent(passwordSecretName(user.name))}`,
        timeoutMs: TIMEOUT_MS,
      })
      .catch((error: unknown) => {
        if (error instanceof KubeApiError && error.code === 404) return undefined;
        throw error;
      });
    const stored = storedHashFrom(read);
    return hashBelongsTo(stored, user) ? stored?.hash : undefined;
  }

  /** Makes `hash` the password of the User (name and uid): the Secret is created, or replaced whole. */
  async set(user: string, uid: string, hash: string): Promise<void> {
    const body = passwordSecret(this.namespace, user, uid, hash);
    try {
      await this.client.request({ method: 'POST', path: this.collection, body, timeoutMs: TIMEOUT_MS });
    } catch (error) {
      if (!(error instanceof KubeApiError && error.code === 409)) throw error;
      await this.client.request({
        method: 'PUT',
        path: `${this.collection}/${encodeURIComponent(passwordSecretName(user))}`,
        body,
        timeoutMs: TIMEOUT_MS,
      });
    }
  }

  /** Removes the user's hash (a deleted user's); none is fine. */
  async remove(user: string): Promise<void> {
    await this.client
      .request({
        method: 'DELETE',
        path: `${this.collection}/${encodeURIComponent(passwordSecretName(user))}`,
        timeoutMs: TIMEOUT_MS,
      })
      .catch((error: unknown) => {
        if (!(error instanceof KubeApiError && error.code === 404)) throw error;
      });
  }
}
