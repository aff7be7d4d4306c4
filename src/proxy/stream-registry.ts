import { performance } from 'node:perf_hooks';
import type { UserInfo } from '../auth/identity.js';

/** Ends of sessions and users remembered, so a stream that registers just after its access ended is cut at once. */
const REMEMBERED_ENDS = 10_000;

interface OpenStream {
  readonly user: UserInfo;
  readonly close: () => void;
}

/** A user's end: all of the name (disabled), or one incarnation (`uid`, deleted). */
interface UserEnd {
  at: number;
  uid?: string;
}

/**
 * The long-running streams kapi relays (watches, log follows, exec / attach / port-forward sessions), by login
 * session and by user. A request is authenticated once, when it starts; this is how a stream learns that its access
 * ended later — logout, revocation, expiry, a user deleted or disabled — and is cut instead of living on until it
 * closes. An end seen between the authentication and the registration (a watch whose response head was on its way)
 * is remembered, with its time, and cuts the stream as it registers.
 */
export class StreamRegistry {
  private readonly bySession = new Map<string, Set<OpenStream>>();
  private readonly byUser = new Map<string, Set<OpenStream>>();
  /** When each session and user ended (performance.now()); insertion order makes the oldest the first forgotten. */
  private readonly sessionEnds = new Map<string, number>();
  private readonly userEnds = new Map<string, UserEnd[]>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Open streams. */
  get size(): number {
    let count = 0;
    for (const streams of this.byUser.values()) count += streams.size;
    return count;
  }

  /**
   * Tracks a stream until the returned function is called (when it closes by itself). `close` cuts it; it is called
   * at most once, never from within `register` (access that ended after `user.checkedAt` — or at all, when the
   * identity does not say when it was checked — is cut on the next tick).
   */
  register(user: UserInfo, close: () => void): () => void {
    if (this.endedSince(user)) {
      process.nextTick(close);
      return () => {};
    }
    const stream: OpenStream = { user, close };
    if (user.sessionId !== undefined) add(this.bySession, user.sessionId, stream);
    add(this.byUser, user.username, stream);
    return () => void this.forget(stream);
  }

  /** Ends every open stream (a shutdown's drain). */
  closeAll(): void {
    for (const streams of [...this.byUser.values()]) {
      for (const stream of [...streams]) {
        this.forget(stream);
        stream.close();
      }
    }
  }

  /** Cuts every stream of the login session. */
  endSession(id: string): void {
    this.sessionEnds.delete(id);
    remember(this.sessionEnds, id, this.now());
    this.cut(this.bySession.get(id));
  }

  /** Cuts every stream of the user; with `uid`, only those of that incarnation (a User deleted and created again). */
  endUser(username: string, uid?: string): void {
    const ends = (this.userEnds.get(username) ?? []).filter((end) => end.uid !== uid).slice(-7);
    this.userEnds.delete(username);
    remember(this.userEnds, username, [...ends, { at: this.now(), uid }]);
    const streams = this.byUser.get(username);
    if (!streams) return;
    this.cut([...streams].filter((s) => matches(s.user, uid)));
  }

  private endedSince(user: UserInfo): boolean {
    const since = user.checkedAt ?? -Infinity;
    const sessionEnd = user.sessionId === undefined ? undefined : this.sessionEnds.get(user.sessionId);
    if (sessionEnd !== undefined && sessionEnd >= since) return true;
    return (this.userEnds.get(user.username) ?? []).some((end) => end.at >= since && matches(user, end.uid));
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

/** Whether an end of the user with `uid` (undefined: every incarnation) concerns this identity. */
function matches(user: UserInfo, uid: string | undefined): boolean {
  return uid === undefined || user.uid === undefined || user.uid === uid;
}

function remember<V>(ends: Map<string, V>, key: string, value: V): void {
  ends.set(key, value);
  if (ends.size > REMEMBERED_ENDS) ends.delete(ends.keys().next().value!);
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
