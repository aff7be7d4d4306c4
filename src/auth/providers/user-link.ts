import { createHash } from 'node:crypto';
import { isObjectName } from '../kube-names.js';
import {
  IDENTITY_PROVIDER_LABEL,
  isReservedGroup,
  UPSTREAM_USERNAME_ANNOTATION,
  UPSTREAM_USER_ID_ANNOTATION,
} from '../users/user-record.js';
import type { UpstreamIdentity } from './identity-provider.js';

/**
 * How an upstream identity becomes a `User`, pure: the names an auto-created User may take, the object itself, and
 * the groups a login session keeps.
 */

/** Labels carry this digest of the upstream id (ids are DNs and other text no label value can hold). */
export const UPSTREAM_USER_ID_HASH_LABEL = 'iam.kapi.io/upstream-user-id-hash';
/** A session keeps at most this many upstream groups (the LoginSession CRD's limit). */
export const MAX_SESSION_GROUPS = 256;
const MAX_GROUP_LENGTH = 253;
const MAX_DERIVED_NAME = 63;
const EMAIL = /^[^@\s]+@[^@\s]+$/;

/**
 * The names an auto-created User may take, in order: the upstream user name made into a DNS-1123 name (lower case,
 * accents dropped, anything else "-"), then that name with a suffix from the provider and id, which no other
 * identity derives. A name with nothing usable left (all CJK, all punctuation) is `<provider>-<digest>`.
 */
export function candidateUserNames(identity: Pick<UpstreamIdentity, 'provider' | 'userId' | 'username'>): string[] {
  const digest = createHash('sha256').update(`${identity.provider}\u0000${identity.userId}`).digest('hex').slice(0, 8);
  const base = normalizedName(identity.username);
  if (base === '') return [`${identity.provider}-${digest}`];
  const suffixed = `${base.slice(0, MAX_DERIVED_NAME - 9).replace(/-+$/, '')}-${digest}`;
  return [base, suffixed].filter(isObjectName);
}

function normalizedName(username: string): string {
  return username
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_DERIVED_NAME)
    .replace(/-+$/, '');
}

/** The label value that stands for an upstream id: `sha256-` and 56 hex digits (63 characters, a label's most). */
export function upstreamUserIdHash(userId: string): string {
  return `sha256-${createHash('sha256').update(userId).digest('hex').slice(0, 56)}`;
}

/**
 * The User an auto mapping creates: linked by label and annotations, no password (the provider checks it), the
 * upstream e-mail only when `emailFree` (no other User has it: a shared address would stop both from logging in by
 * it), and no groups of its own (upstream groups live in each login session).
 */
export function linkedUserObject(
  identity: UpstreamIdentity,
  name: string,
  emailFree: boolean,
): Record<string, unknown> {
  const spec: Record<string, unknown> = { groups: [] };
  if (emailFree && identity.email && identity.email.length <= 254 && EMAIL.test(identity.email)) {
    spec.email = identity.email;
  }
  return {
    apiVersion: 'iam.kapi.io/v1beta1',
    kind: 'User',
    metadata: {
      name,
      labels: {
        [IDENTITY_PROVIDER_LABEL]: identity.provider,
        [UPSTREAM_USER_ID_HASH_LABEL]: upstreamUserIdHash(identity.userId),
      },
      annotations: {
        [UPSTREAM_USER_ID_ANNOTATION]: identity.userId,
        [UPSTREAM_USERNAME_ANNOTATION]: identity.username,
      },
    },
    spec,
  };
}

/**
 * The groups a login session keeps from its provider: prefixed, without Kubernetes' reserved `system:` groups
 * (impersonating them would make a directory administrator a cluster administrator), without empty or over-long
 * names, each once, at most `MAX_SESSION_GROUPS`.
 */
export function sessionGroups(groups: readonly string[], prefix: string): string[] {
  const kept = new Set<string>();
  for (const group of groups) {
    const name = `${prefix}${group}`;
    if (group === '' || name.length > MAX_GROUP_LENGTH) continue;
    if (isReservedGroup(group) || isReservedGroup(name)) continue;
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(name)) continue;
    kept.add(name);
    if (kept.size === MAX_SESSION_GROUPS) break;
  }
  return [...kept];
}
