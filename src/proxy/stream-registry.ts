import type { UserInfo } from '../auth/identity.js';

/** Ended session ids remembered, so a stream that registers just after its session ended is cut at once. */
const REMEMBERED_ENDED_SESSIONS = 10_000;

interface OpenStream {
  readonly user: UserInfo;
  readonly close: () => void;
}

/**
 * The long-running streams kapi relays (watches, log follows, exec / attach / port-forward sessions), by login
 * session and by user. A request is authenticated once, when it starts; this is how a stream learns that its access
 * ended later — logout, revocation, a user deleted or disabled — and is cut instead of living on until it closes.
 */
export class StreamRegistry {
  private readonly bySession = new Map<string, Set<OpenStream>>();
  private readonly byUser = new Map<string, Set<OpenStream>>();
  /** Session ids are never reused: an ended one stays ended. Insertion order makes the oldest the first evicted. */
  private readonly endedSessions = new Set<string>();

  /** Open streams. */
  get size(): number {
    let count = 0;
    for (const streams of this.byUser.values()) count += streams.size;
    return count;
  }

  /**
   * Tracks a stream until the returned function is called (when it closes by itself). `close` cuts it; it is called
   * at most once, never from within `register` (a session already ended is cut on the next tick).
   */
  register(user: UserInfo, close: () => void): () => void {
    if (user.sessionId !== undefined && this.endedSessions.has(user.sessionId)) {
      process.nextTick(close);
      return () => {};
    }
    const stream: OpenStream = { user, close };
    if (user.sessionId !== undefined) add(this.bySession, user.sessionId, stream);
    add(this.byUser, user.username, stream);
    return () => void this.forget(stream);
  }

  /** Cuts every stream of the login session. */
  endSession(id: string): void {
    this.endedSessions.delete(id);
    this.endedSessions.add(id);
    if (this.endedSessions.size > REMEMBERED_ENDED_SESSIONS) {
      this.endedSessions.delete(this.endedSessions.values().next().value!);
    }
    this.cut(this.bySession.get(id));
  }

  /** Cuts every stream of the user; with `uid`, only those of that incarnation (a User deleted and created again). */
  endUser(username: string, uid?: string): void {
    const streams = this.byUser.get(username);
    if (!streams) return;
    this.cut(uid === undefined ? streams : [...streams].filter((s) => s.user.uid === undefined || s.user.uid === uid));
  }

  private cut(streams: Iterable<OpenStream> | undefined): void {
    if (!streams) return;
    for (const stream of [...streams]) {
      // a close that ended more streams (re-entrantly) may have cut this one already
      if (!this.forget(stream)) continue;
      try {
        stream.close();
      } catch {
        // a stream that fails to close is already gone; the others must still be cut
      }
    }
  }

  /** Whether the stream was still registered. */
  private forget(stream: OpenStream): boolean {
    const { sessionId, username } = stream.user;
    if (sessionId !== undefined) remove(this.bySession, sessionId, stream);
    return remove(this.byUser, username, stream);
  }
}

function add(index: Map<string, Set<OpenStream>>, key: string, stream: OpenStream): void {
  let streams = index.get(key);
  if (!streams) index.set(key, (streams = new Set()));
  streams.add(stream);
}

function remove(index: Map<string, Set<OpenStream>>, key: string, stream: OpenStream): boolean {
  const streams = index.get(key);
  if (!streams?.delete(stream)) return false;
  if (streams.size === 0) index.delete(key);
  return true;
}
