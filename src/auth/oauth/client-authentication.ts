import { createHash, timingSafeEqual } from 'node:crypto';
import type { GrantType, OAuthClient } from '../../config/cluster-configuration.js';
import { invalidClient, invalidRequest, unauthorizedClient } from './oauth-error.js';
import { param, parseBasicCredentials, type FormParams } from './oauth-form.js';

/**
 * OAuth client authentication (RFC 6749 §2.3.1): `client_id` + `client_secret` in the body, or HTTP Basic — never
 * both. Pure: the configured clients come in as an argument.
 */
export interface ClientCredentials {
  clientId: string;
  /** Absent for a public client, which proves nothing but its client_id. */
  secret: string | undefined;
  usedBasic: boolean;
}

/**
 * The credentials a request presents. A body `client_id` equal to the Basic one is tolerated (some libraries send
 * both); a body secret beside Basic, or two different ids, is two methods at once: `invalid_request`.
 */
export function clientCredentialsOf(params: FormParams, authorization: string | undefined): ClientCredentials {
  const basic = parseBasicCredentials(authorization);
  const bodyId = param(params, 'client_id');
  const bodySecret = param(params, 'client_secret');
  if (basic) {
    if (bodySecret !== undefined || (bodyId !== undefined && bodyId !== basic.clientId)) {
      throw invalidRequest(
        'use one client authentication method: HTTP Basic or client_id and client_secret in the body',
      );
    }
    return { clientId: basic.clientId, secret: basic.secret, usedBasic: true };
  }
  if (bodyId === undefined) {
    if (bodySecret !== undefined) throw invalidRequest('missing parameter "client_id"');
    throw invalidClient(false);
  }
  return { clientId: bodyId, secret: bodySecret, usedBasic: false };
}

/**
 * The configured client these credentials prove, or `invalid_client` (unknown id and wrong secret alike). A
 * confidential client must present its secret; a public client must present none (an empty Basic password counts
 * as none, as some libraries send it).
 */
export function authenticateClient(credentials: ClientCredentials, clients: readonly OAuthClient[]): OAuthClient {
  const client = clients.find((candidate) => candidate.name === credentials.clientId);
  if (client?.public) {
    if (credentials.secret !== undefined && credentials.secret !== '') throw invalidClient(credentials.usedBasic);
    return client;
  }
  // An unknown id still costs one comparison, so timing does not tell known ids from unknown ones.
  const matches = secretsEqual(credentials.secret ?? '', client?.secret ?? '\u0000unknown client');
  if (!client || credentials.secret === undefined || !matches) throw invalidClient(credentials.usedBasic);
  return client;
}

export function requireGrant(client: OAuthClient, grantType: GrantType): void {
  if (!client.grantTypes.includes(grantType)) throw unauthorizedClient(grantType);
}

/** Constant-time comparison: both sides are hashed first, so neither content nor length shows in the timing. */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}
