import type { Logger } from '../../observability/logger.js';
import type { UserRecord } from '../users/user-record.js';

/**
 * Access that ended before its tokens expired, as one replica sees it: one login session (logout, revocation, a
 * reused refresh token, another login with multipleLogin off, deletion by an admin, the expiry sweep), or a user
 * (deleted, or disabled). Whoever holds something open on that access — a relayed watch, an exec session — ends it.
 */
export type Revocation =
  | { kind: 'session'; sessionId: string }
  /** `uid` set: only what belongs to that incarnation of the user (a deleted one); absent: all of the name. */
  | { kind: 'user'; username: string; uid?: string };

export type RevocationListener = (revocation: Revocation) => void;

/** The revocations a change of a cached User means (pure): disabled, or deleted and created again under its name. */
export function userChangeRevocations(user: UserRecord, old: UserRecord | undefined): Revocation[] {
  if (user.state === 'Disabled') return [{ kind: 'user', username: user.name }];
  if (old?.uid && user.uid && old.uid !== user.uid) return [{ kind: 'user', username: old.name, uid: old.uid }];
  return [];
}

/** The revocation a deleted User means. */
export function userDeletedRevocation(user: UserRecord): Revocation {
  return user.uid ? { kind: 'user', username: user.name, uid: user.uid } : { kind: 'user', username: user.name };
}

/** Listeners of one store's revocations. A failing listener is logged and never breaks the store or the others. */
export class RevocationEvents {
  private readonly listeners = new Set<RevocationListener>();

  constructor(private readonly logger: Logger) {}

  on(listener: RevocationListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(revocation: Revocation): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(revocation);
      } catch (error) {
        this.logger.error('revocation listener failed', { kind: revocation.kind, error: String(error) });
      }
    }
  }
}
