import type { UserInfo } from './identity.js';

/**
 * The caller's access token, kept beside the identity it proved (never on it: an identity is logged and passed
 * around, a token must not be), when that token could stand for the caller at kube-apiserver (SPEC §5's token
 * pass-through): signed with a published (asymmetric) key, issued by an https issuer, naming exactly the groups kapi
 * would impersonate, and not about to expire.
 */
export interface PassableToken {
  readonly token: string;
  /** `exp`, seconds since the epoch. */
  readonly expiresAt: number;
}

const passable = new WeakMap<UserInfo, PassableToken>();

/** A token kube-apiserver would refuse this close to its end is not passed: kapi impersonates instead. */
export const PASS_THROUGH_MIN_REMAINING_SECONDS = 30;

export function keepPassableToken(user: UserInfo, token: PassableToken): void {
  passable.set(user, token);
}

/** The token to pass on for `user`, if it may be (see `PassableToken`). */
export function passableTokenOf(user: UserInfo): PassableToken | undefined {
  return passable.get(user);
}

/** Whether a verified access token may be passed on for the identity kapi derived from it. */
export function isPassable(
  claims: { iss: string; exp: number; groups?: readonly string[] },
  algorithm: string,
  impersonatedGroups: readonly string[],
  authenticatedGroup: string,
  nowSeconds: number,
): boolean {
  if (algorithm === 'HS256' || !claims.iss.startsWith('https://')) return false;
  if (claims.exp - nowSeconds < PASS_THROUGH_MIN_REMAINING_SECONDS) return false;
  const carried = new Set(claims.groups ?? []);
  carried.add(authenticatedGroup);
  const wanted = new Set(impersonatedGroups);
  wanted.add(authenticatedGroup);
  return carried.size === wanted.size && [...wanted].every((group) => carried.has(group));
}
