import type { UserInfo } from './identity.js';
import type { KeySet } from './tokens/key-set.js';
import { buildClaims, newTokenId, signToken } from './tokens/tokens.js';

/**
 * The caller's access token, kept beside the identity it proved (never on it: an identity is logged and passed
 * around, a token must not be), when that token could stand for the caller at kube-apiserver (SPEC §5's token
 * pass-through): signed with the active key of the set (published, asymmetric), issued by kapi's current https
 * issuer, naming exactly the groups kapi would impersonate, and not about to expire.
 */
export interface PassableToken {
  readonly token: string;
  /** `exp`, seconds since the epoch. */
  readonly expiresAt: number;
  /** The signing key's id: kube-apiserver's verdict is about tokens of one key (the probe's). */
  readonly kid: string;
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
  signedWith: { algorithm: string; active: boolean },
  issuer: string,
  impersonatedGroups: readonly string[],
  authenticatedGroup: string,
  nowSeconds: number,
): boolean {
  if (signedWith.algorithm === 'HS256' || !signedWith.active) return false;
  if (claims.iss !== issuer || !issuer.startsWith('https://')) return false;
  if (claims.exp - nowSeconds < PASS_THROUGH_MIN_REMAINING_SECONDS) return false;
  const carried = new Set(claims.groups ?? []);
  carried.add(authenticatedGroup);
  const wanted = new Set(impersonatedGroups);
  wanted.add(authenticatedGroup);
  return carried.size === wanted.size && [...wanted].every((group) => carried.has(group));
}

/**
 * A token kapi signs to ask kube-apiserver whether it accepts kapi's tokens (a TokenReview), instead of a caller's:
 * a review's token may land in kube-apiserver's audit log, and this one names nobody, holds no session (kapi itself
 * refuses it) and ends in a minute. Shaped as an access token, signed with the active key, for the current issuer.
 */
export interface ProbeToken {
  readonly token: string;
  readonly kid: string;
  readonly username: string;
  readonly groups: readonly string[];
}

export const PROBE_USERNAME = 'kapi:token-pass-through-probe';
const PROBE_LIFETIME_SECONDS = 60;

/** The probe, or undefined when kube-apiserver could not verify kapi's tokens at all (HS256, no https issuer). */
export function mintProbeToken(keys: KeySet, issuer: string, nowSeconds: number): ProbeToken | undefined {
  if (keys.active.algorithm === 'HS256' || !issuer.startsWith('https://')) return undefined;
  const groups = [PROBE_USERNAME];
  const claims = buildClaims(
    'access_token',
    { username: PROBE_USERNAME, clientId: 'kapi', sessionId: 'none', groups },
    { id: newTokenId(), issuedAt: nowSeconds, expiresAt: nowSeconds + PROBE_LIFETIME_SECONDS },
    issuer,
  );
  return { token: signToken(claims, keys.active), kid: keys.active.kid, username: PROBE_USERNAME, groups };
}
