import { createHash, randomBytes } from 'node:crypto';
import { timestamp } from '../users/login-limits.js';
import { isReservedGroup } from '../users/user-record.js';

/**
 * A login session (`LoginSession`, iam.kapi.io/v1beta1): one object per login, named by the session id that every
 * token of the login carries. Deleting it revokes the login on every replica. Pure: JSON in, JSON out, decisions.
 */
export const SESSIONS_PATH = '/apis/iam.kapi.io/v1beta1/loginsessions';
export const USERNAME_LABEL = 'iam.kapi.io/username';
/** The uid of the User who logged in: a User deleted and created again under the same name is someone else. */
export const USER_UID_ANNOTATION = 'iam.kapi.io/user-uid';
/** How long the refresh token replaced by a rotation still counts, for concurrent refreshes from one client. */
export const ROTATION_GRACE_SECONDS = 5;

/** Times in whole seconds since the epoch (they become JWT `iat`/`exp`). */
export interface SessionSpec {
  username: string;
  clientId: string;
  /** When the current refresh token, and with it the session, expires. */
  expiresAt: number;
  /** The jti of the only refresh token that may be used next. */
  refreshTokenId: string;
  previousRefreshTokenId?: string;
  /** When `refreshTokenId` was issued by a rotation: the `iat` of the current refresh token and the grace start. */
  rotatedAt?: number;
  /** When the user logged in, in milliseconds (the oldest sessions end first); absent in sessions of older versions. */
  loginTime?: number;
  /** Kept in an annotation (not part of the CRD's spec). */
  userUid?: string;
  /**
   * The OAuth scopes granted, space-separated, for a session started by an authorization code; absent for a password
   * login (whose tokens carry no scope and are not limited by one).
   */
  scope?: string;
  /** The identity provider that vouched for the user (absent: a local password). */
  identityProvider?: string;
  /**
   * Groups the provider gave at the login or the last refresh (prefixed, `system:` dropped), impersonated beside the
   * User's own groups.
   */
  groups?: readonly string[];
}

export interface LoginSession extends SessionSpec {
  id: string;
  resourceVersion: string;
  /** The object's metadata as read, kept so an update does not drop labels or annotations others set. */
  metadata?: Readonly<Record<string, unknown>>;
}

export function loginSessionFrom(raw: unknown): LoginSession {
  const object = asObject(raw);
  const metadata = asObject(object.metadata);
  const spec = asObject(object.spec);
  const id = metadata.name;
  if (typeof id !== 'string' || id === '') throw new Error('a LoginSession without metadata.name');
  const expiresAt = seconds(spec.expiresAt);
  if (
    typeof spec.username !== 'string' ||
    typeof spec.clientId !== 'string' ||
    typeof spec.refreshTokenId !== 'string'
  ) {
    throw new Error(`LoginSession ${id}: spec.username, clientId and refreshTokenId are required`);
  }
  if (expiresAt === undefined) throw new Error(`LoginSession ${id}: spec.expiresAt is not a time`);
  const { managedFields: _managedFields, ...kept } = metadata;
  const userUid = asObject(metadata.annotations)[USER_UID_ANNOTATION];
  return {
    id,
    resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '',
    metadata: kept,
    username: spec.username,
    clientId: spec.clientId,
    expiresAt,
    refreshTokenId: spec.refreshTokenId,
    previousRefreshTokenId: typeof spec.previousRefreshTokenId === 'string' ? spec.previousRefreshTokenId : undefined,
    rotatedAt: seconds(spec.rotatedAt),
    loginTime: milliseconds(spec.loginTime) ?? milliseconds(metadata.creationTimestamp),
    userUid: typeof userUid === 'string' && userUid !== '' ? userUid : undefined,
    scope: typeof spec.scope === 'string' ? spec.scope : undefined,
    identityProvider:
      typeof spec.identityProvider === 'string' && spec.identityProvider !== '' ? spec.identityProvider : undefined,
    groups: Array.isArray(spec.groups)
      ? // an object edited by hand cannot slip a reserved group in either
        spec.groups.filter((g): g is string => typeof g === 'string' && g !== '' && !isReservedGroup(g))
      : undefined,
  };
}

/** The object to create (no `existing`) or to replace (`existing`: its metadata and resourceVersion precondition). */
export function loginSessionObject(id: string, spec: SessionSpec, existing?: LoginSession): Record<string, unknown> {
  const labels = { ...asObject(existing?.metadata?.labels), [USERNAME_LABEL]: usernameLabelValue(spec.username) };
  const metadata: Record<string, unknown> = { ...(existing?.metadata ?? {}), name: id, labels };
  if (spec.userUid) {
    metadata.annotations = { ...asObject(existing?.metadata?.annotations), [USER_UID_ANNOTATION]: spec.userUid };
  }
  if (existing?.resourceVersion) metadata.resourceVersion = existing.resourceVersion;
  const body: Record<string, unknown> = {
    username: spec.username,
    clientId: spec.clientId,
    expiresAt: timestamp(spec.expiresAt * 1000),
    refreshTokenId: spec.refreshTokenId,
  };
  if (spec.previousRefreshTokenId !== undefined) body.previousRefreshTokenId = spec.previousRefreshTokenId;
  if (spec.rotatedAt !== undefined) body.rotatedAt = timestamp(spec.rotatedAt * 1000);
  if (spec.loginTime !== undefined) body.loginTime = new Date(spec.loginTime).toISOString();
  if (spec.scope !== undefined) body.scope = spec.scope;
  if (spec.identityProvider !== undefined) body.identityProvider = spec.identityProvider;
  if (spec.groups !== undefined && spec.groups.length > 0) body.groups = [...spec.groups];
  return { apiVersion: 'iam.kapi.io/v1beta1', kind: 'LoginSession', metadata, spec: body };
}

/** 128 random bits as 32 hex characters: a valid object name that cannot be guessed. */
export function newSessionId(): string {
  return randomBytes(16).toString('hex');
}

const SESSION_ID = /^[0-9a-f]{32}$/;
export function isSessionId(value: string): boolean {
  return SESSION_ID.test(value);
}

const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** User names can be longer than a label value (253 > 63): those are labelled by a digest of the name. */
export function usernameLabelValue(username: string): string {
  if (LABEL_VALUE.test(username)) return username;
  return `sha256-${createHash('sha256').update(username).digest('hex').slice(0, 56)}`;
}

export function isSessionAlive(session: SessionSpec, nowSeconds: number): boolean {
  return session.expiresAt > nowSeconds;
}

/** Whether the session was started by this very User (same uid), when both uids are known. */
export function belongsTo(
  session: Pick<SessionSpec, 'username' | 'userUid'>,
  user: { name: string; uid?: string },
): boolean {
  if (session.username !== user.name) return false;
  return session.userUid === undefined || user.uid === undefined || session.userUid === user.uid;
}

/**
 * What a refresh token with id `jti` may do with its session:
 * - rotate: it is the current token — issue a new pair;
 * - replay: it was replaced less than the grace ago (a concurrent refresh won the race) — answer with the current
 *   refresh token again, so both callers end up holding the same one;
 * - reuse: anything older — a stolen or replayed token: the session is revoked;
 * - expired: the session is past its end.
 */
export type RefreshDecision = 'rotate' | 'replay' | 'reuse' | 'expired';

export function decideRefresh(session: SessionSpec, jti: string, nowSeconds: number): RefreshDecision {
  if (!isSessionAlive(session, nowSeconds)) return 'expired';
  if (jti === session.refreshTokenId) return 'rotate';
  const withinGrace = session.rotatedAt !== undefined && nowSeconds - session.rotatedAt <= ROTATION_GRACE_SECONDS;
  if (jti === session.previousRefreshTokenId && withinGrace) return 'replay';
  return 'reuse';
}

/**
 * The session after a rotation to `nextTokenId`; each rotation extends the session by the refresh lifetime.
 * `groups`: what the identity provider says now (its groups are read again at every refresh); absent: kept.
 */
export function rotatedSpec(
  session: SessionSpec,
  nextTokenId: string,
  nowSeconds: number,
  refreshMaxAgeSeconds: number,
  groups: readonly string[] | undefined = session.groups,
): SessionSpec {
  return {
    identityProvider: session.identityProvider,
    groups,
    username: session.username,
    clientId: session.clientId,
    userUid: session.userUid,
    expiresAt: nowSeconds + refreshMaxAgeSeconds,
    refreshTokenId: nextTokenId,
    previousRefreshTokenId: session.refreshTokenId,
    rotatedAt: nowSeconds,
    loginTime: session.loginTime,
    scope: session.scope,
  };
}

/**
 * The sessions to end so that a user keeps at most `cap`: those that logged in first (a session without a login time,
 * from an older version, counts as the oldest). Ties are broken by id, so every replica picks the same ones.
 */
export function sessionsBeyondCap<S extends LoginSession>(sessions: readonly S[], cap: number): S[] {
  if (sessions.length <= cap) return [];
  const newestFirst = [...sessions].sort(
    (a, b) => (b.loginTime ?? 0) - (a.loginTime ?? 0) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
  );
  return newestFirst.slice(Math.max(0, cap));
}

function seconds(value: unknown): number | undefined {
  const ms = milliseconds(value);
  return ms === undefined ? undefined : Math.floor(ms / 1000);
}

function milliseconds(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
