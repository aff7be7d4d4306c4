/**
 * A `User` (iam.kapi.io/v1beta1) as identity needs it, read from its JSON. Pure and tolerant: a User applied with
 * only a spec is an Active user; fields with the wrong type are treated as absent rather than failing the cache.
 */
export type UserState = 'Active' | 'Disabled' | 'AuthLimitExceeded';

export interface FailedLogin {
  /** Milliseconds since the epoch. */
  time: number;
  sourceIP: string;
}

export interface UserRecord {
  name: string;
  uid?: string;
  resourceVersion: string;
  email?: string;
  passwordHash?: string;
  groups: readonly string[];
  state: UserState;
  /** Milliseconds since the epoch; meaningful with state AuthLimitExceeded. */
  lockedUntil?: number;
  failedLogins: readonly FailedLogin[];
  /** The upstream identity this User stands for (a directory account); absent on local Users. */
  link?: UpstreamLink;
}

/**
 * A User linked to an upstream identity carries the provider's name in the label `IDENTITY_PROVIDER_LABEL` (so
 * `kubectl get users -l iam.kapi.io/identity-provider=corp` lists them) and the identity's id, exactly, in the
 * annotation `UPSTREAM_USER_ID_ANNOTATION`; both are needed for a link. A login through that provider with that id
 * maps to this User and to no other; a User without them (a local one) is never taken over by a provider.
 */
export interface UpstreamLink {
  provider: string;
  userId: string;
  /** The upstream user name when the link was made; absent on Users an administrator linked by id alone. */
  username?: string;
}

export const IDENTITY_PROVIDER_LABEL = 'iam.kapi.io/identity-provider';
export const UPSTREAM_USER_ID_ANNOTATION = 'iam.kapi.io/upstream-user-id';
export const UPSTREAM_USERNAME_ANNOTATION = 'iam.kapi.io/upstream-username';

export const USERS_PATH = '/apis/iam.kapi.io/v1beta1/users';

/** Kubernetes reserves this prefix for its own groups. */
export const RESERVED_GROUP_PREFIX = 'system:';
/** kapi reserves this one for the groups only it asserts (a department: `kapi:department:<group>`). */
export const KAPI_GROUP_PREFIX = 'kapi:';

/** A group no User, directory or OpenID provider may bring: Kubernetes' own and kapi's. */
export const isReservedGroup = (group: string) =>
  group.startsWith(RESERVED_GROUP_PREFIX) || group.startsWith(KAPI_GROUP_PREFIX);

const STATES: readonly UserState[] = ['Active', 'Disabled', 'AuthLimitExceeded'];

export function userRecordFrom(raw: unknown): UserRecord {
  const object = asObject(raw);
  const metadata = asObject(object.metadata);
  const spec = asObject(object.spec);
  const status = asObject(object.status);
  const name = metadata.name;
  if (typeof name !== 'string' || name === '') throw new Error('a User without metadata.name');
  // a User being deleted (its cleanup finalizer still on it) has no access left: as a disabled one
  const state =
    typeof metadata.deletionTimestamp === 'string'
      ? 'Disabled'
      : STATES.includes(status.state as UserState)
        ? (status.state as UserState)
        : 'Active';
  // Groups are impersonated at kube-apiserver: a `system:` group (system:masters…) in a User would turn whoever can
  // edit Users into cluster-admin, so reserved groups are never taken from a User.
  const groups = Array.isArray(spec.groups)
    ? spec.groups.filter((g): g is string => typeof g === 'string' && g !== '' && !isReservedGroup(g))
    : [];
  const failedLogins = Array.isArray(status.failedLogins)
    ? status.failedLogins.flatMap((entry: unknown) => {
        const { time, sourceIP } = asObject(entry);
        const at = typeof time === 'string' ? Date.parse(time) : NaN;
        return Number.isFinite(at) ? [{ time: at, sourceIP: typeof sourceIP === 'string' ? sourceIP : '' }] : [];
      })
    : [];
  const lockedUntil = typeof status.lockedUntil === 'string' ? Date.parse(status.lockedUntil) : NaN;
  const link = upstreamLinkOf(asObject(metadata.labels), asObject(metadata.annotations));
  return {
    name,
    uid: typeof metadata.uid === 'string' ? metadata.uid : undefined,
    resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '',
    email: typeof spec.email === 'string' && spec.email !== '' ? spec.email : undefined,
    passwordHash: typeof spec.password === 'string' && spec.password !== '' ? spec.password : undefined,
    groups: [...new Set(groups)],
    state,
    lockedUntil: Number.isFinite(lockedUntil) ? lockedUntil : undefined,
    failedLogins,
    ...(link ? { link } : {}),
  };
}

function upstreamLinkOf(
  labels: Record<string, unknown>,
  annotations: Record<string, unknown>,
): UpstreamLink | undefined {
  const provider = labels[IDENTITY_PROVIDER_LABEL];
  const userId = annotations[UPSTREAM_USER_ID_ANNOTATION];
  if (typeof provider !== 'string' || provider === '' || typeof userId !== 'string' || userId === '') return undefined;
  const username = annotations[UPSTREAM_USERNAME_ANNOTATION];
  return typeof username === 'string' && username !== '' ? { provider, userId, username } : { provider, userId };
}

/** The key of the index of linked Users. */
export function linkKey(provider: string, userId: string): string {
  return `${provider}\u0000${userId}`;
}

/** E-mail addresses are matched case-insensitively. */
export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
