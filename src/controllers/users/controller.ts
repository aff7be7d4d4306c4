import { KubeApiError, type KubeClient } from '../../kube/client.js';
import { describeError } from '../../kube/cache-health.js';
import { Reflector } from '../../kube/reflector.js';
import type { Logger } from '../../observability/logger.js';
import { USERS_PATH } from '../../auth/users/user-record.js';
import { hashRemovalPatch } from '../../auth/users/users.js';
import {
  USER_FINALIZER,
  finalizerAddition,
  finalizerRemoval,
  realizedGrantsOf,
  removeUserTraces,
} from './user-cleanup.js';

/** A deleted user whose realized grants the platform roles controller has not taken away yet: tried again soon. */
export class GrantsStillRealized extends Error {
  constructor(user: string, bindings: string[]) {
    super(`user "${user}" is still named by ${bindings.slice(0, 3).join(', ')}${bindings.length > 3 ? ', …' : ''}`);
    this.name = 'GrantsStillRealized';
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/** A User as this controller needs it (pure): whether it is going, is kapi's to clean up, and holds a hash. */
export interface UserState {
  name: string;
  uid: string;
  resourceVersion: string;
  deleting: boolean;
  finalized: boolean;
  /** `spec.password`, or a copy in kubectl's last-applied annotation: a hash anyone who may read Users reads. */
  exposedHash: boolean;
  hash?: string;
}

export function userStateFrom(raw: Raw): UserState {
  const metadata = raw?.metadata ?? {};
  const hash = raw?.spec?.password;
  return {
    name: String(metadata.name ?? ''),
    uid: String(metadata.uid ?? ''),
    resourceVersion: String(metadata.resourceVersion ?? ''),
    deleting: typeof metadata.deletionTimestamp === 'string',
    finalized: Array.isArray(metadata.finalizers) && metadata.finalizers.includes(USER_FINALIZER),
    exposedHash: hashRemovalPatch(raw) !== undefined,
    ...(typeof hash === 'string' && hash.startsWith('$2') && { hash }),
  };
}

/** What to do for a User (pure): in this order of need. */
export type UserWork = 'clean-up' | 'finalize' | 'move-hash' | 'none';

export function workFor(user: UserState): UserWork {
  if (user.deleting) return user.finalized ? 'clean-up' : 'none';
  if (!user.finalized) return 'finalize';
  if (user.exposedHash) return 'move-hash';
  return 'none';
}

export interface UserControllerOptions {
  client: KubeClient;
  logger: Logger;
  /** kapi's namespace: the password Secrets are there. */
  kapiNamespace: string;
  /** Sets a user's password hash (the identity's password Secrets). */
  setPassword(user: string, uid: string, hash: string): Promise<void>;
  /**
   * Whether a hash found in a User object may be taken as its password: the tenant guard holds `spec.password` to
   * `update users/password`. Without it the hash is left in the object, unused, until the guard is in place.
   */
  hashesTrusted: () => boolean;
}

const RETRY_MS = 5_000;
/** A deleted user's realized grants are looked at again this soon (the platform roles controller is quick). */
const WAIT_MS = 200;
const TIMEOUT_MS = 10_000;

/**
 * Keeps every User's traces kapi's to remove, while this replica leads: puts the cleanup finalizer on each User (one
 * applied with kubectl has none), runs the cleanup of a User being deleted (user-cleanup.ts) and then lets it go, and
 * moves a hash found in a User object (as KubeSphere keeps it, or as kubectl applied it) into the user's password
 * Secret, taking it out of the object. Each User is worked on one at a time; a failure is tried again later.
 */
export class UserController {
  private readonly users: Reflector<UserState>;
  private readonly log: Logger;
  private readonly queue = new Set<string>();
  /** Users deleted without kapi's finalizer, whose traces are still to go. */
  private readonly gone = new Set<string>();
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Only waiting on the platform roles controller: look again soon. */
  private soon = false;
  /** Told after each User's work (tests wait on it). */
  onWork?: (user: string, work: UserWork, error?: unknown) => void;

  constructor(private readonly options: UserControllerOptions) {
    this.log = options.logger.child({ component: 'users' });
    this.users = new Reflector<UserState>({
      client: options.client,
      logger: options.logger,
      name: 'controller/users',
      listPath: USERS_PATH,
      transform: userStateFrom,
    });
    const enqueue = (user: UserState) => {
      if (workFor(user) === 'none') return;
      this.queue.add(user.name);
      this.kick();
    };
    this.recheck = () => this.users.list().forEach(enqueue);
    this.users.on('added', enqueue);
    this.users.on('modified', enqueue);
    this.users.on('synced', () => {
      this.users.list().forEach(enqueue);
      void this.dangling();
    });
    // a User deleted before kapi put its finalizer on it: its traces go after the fact
    this.users.on('deleted', (user) => {
      if (user.finalized) return;
      this.gone.add(user.name);
      this.queue.add(user.name);
      this.kick();
    });
  }

  /** Looks at every User again (the tenant guard came into place: hashes left in Users can now be moved). */
  readonly recheck: () => void;

  start(): void {
    this.users.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.users.stop();
  }

  private kick(delayMs = 0): void {
    if (this.stopped || this.running || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.drain().finally(() => {
        this.running = undefined;
        if (this.queue.size > 0) this.kick(this.soon ? WAIT_MS : RETRY_MS);
      });
    }, delayMs);
    this.timer.unref?.();
  }

  /** Works through the queue until it is empty; what failed is queued again for later. */
  private async drain(): Promise<void> {
    const failed = new Set<string>();
    const waiting = new Set<string>();
    while (this.queue.size > 0 && !this.stopped) await this.drainOnce(failed, waiting);
    for (const name of [...failed, ...waiting]) this.queue.add(name);
    this.soon = waiting.size > 0 && failed.size === 0;
  }

  private async drainOnce(failed: Set<string>, waiting: Set<string>): Promise<void> {
    for (const name of [...this.queue]) {
      if (this.stopped) return;
      this.queue.delete(name);
      const user = this.users.get(name);
      if (!user) {
        if (this.gone.has(name)) await this.afterTheFact(name, failed);
        continue;
      }
      this.gone.delete(name);
      const work = workFor(user);
      try {
        await this.work(user, work);
        this.onWork?.(name, work);
      } catch (error) {
        // a conflict means the watch brings a newer User, which is queued again
        if (error instanceof GrantsStillRealized) waiting.add(name);
        else if (!(error instanceof KubeApiError && (error.code === 404 || error.code === 409 || error.code === 422))) {
          failed.add(name);
          this.log.warn('could not complete the work on a user', { user: name, work, error: describeError(error) });
        }
        this.onWork?.(name, work, error);
      }
    }
  }

  /**
   * Workspaces managed by a name no User has (deleted while no replica led, without the finalizer): their managers
   * are cleaned up after, as a deletion seen would be.
   */
  private async dangling(): Promise<void> {
    try {
      const templates = await this.options.client.request<{ items?: Raw[] }>({
        path: '/apis/tenant.kapi.io/v1alpha2/workspacetemplates',
        timeoutMs: TIMEOUT_MS,
      });
      for (const template of templates?.items ?? []) {
        const manager = template?.spec?.template?.spec?.manager;
        if (typeof manager !== 'string' || manager === '' || this.users.get(manager)) continue;
        this.gone.add(manager);
        this.queue.add(manager);
      }
      this.kick();
    } catch (error) {
      this.log.warn('could not look for workspaces whose manager is gone', { error: describeError(error) });
    }
  }

  /** Cleans up after a User deleted without the finalizer (unless one of its name was made meanwhile). */
  private async afterTheFact(name: string, failed: Set<string>): Promise<void> {
    try {
      const outcome = await removeUserTraces(this.options.client, this.options.kapiNamespace, name);
      this.gone.delete(name);
      this.log.warn('a user deleted before kapi could guard its deletion: cleaned up after it', {
        audit: 'user',
        user: name,
        ...outcome,
      });
    } catch (error) {
      failed.add(name);
      this.log.warn('could not clean up after a deleted user', { user: name, error: describeError(error) });
    }
  }

  private async work(user: UserState, work: UserWork): Promise<void> {
    const { client } = this.options;
    const path = `${USERS_PATH}/${encodeURIComponent(user.name)}`;
    const patch = (body: unknown[]) =>
      client.request({
        method: 'PATCH',
        path,
        contentType: 'application/json-patch+json',
        body,
        timeoutMs: TIMEOUT_MS,
      });
    const fresh = () => client.request<Raw>({ path, timeoutMs: TIMEOUT_MS });
    switch (work) {
      case 'finalize': {
        const addition = finalizerAddition(await fresh());
        if (addition) await patch(addition);
        return;
      }
      case 'clean-up': {
        const outcome = await removeUserTraces(client, this.options.kapiNamespace, user.name);
        // the name stays taken until no realized grant names it (the platform roles controller follows the cleanup)
        const left = await realizedGrantsOf(client, user.name);
        if (left.length > 0) throw new GrantsStillRealized(user.name, left);
        const removal = finalizerRemoval(await fresh());
        if (removal) await patch(removal);
        this.log.info('deleted user cleaned up', { audit: 'user', user: user.name, ...outcome });
        return;
      }
      case 'move-hash': {
        const raw = await fresh();
        const hash = raw?.spec?.password;
        // without the guard, anyone who may edit Users could have written it: left where it is, and not used for
        // logins either (users.ts), until the guard is in place
        if (!this.options.hashesTrusted()) return;
        const kept = typeof hash === 'string' && hash.startsWith('$2');
        if (kept) await this.options.setPassword(user.name, String(raw.metadata.uid), hash);
        const removal = hashRemovalPatch(raw);
        if (removal) await patch(removal);
        if (kept) this.log.info('password hash moved out of the User object', { user: user.name });
        else
          this.log.warn('a password in a User object that is no bcrypt hash was taken out of it', { user: user.name });
        return;
      }
      case 'none':
        return;
    }
  }
}
