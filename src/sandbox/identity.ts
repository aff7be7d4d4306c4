import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** An authenticated caller, as kube's user.Info. */
export interface SandboxUser {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export const AUTHENTICATED = 'system:authenticated';
export const ANONYMOUS: SandboxUser = { username: 'system:anonymous', groups: ['system:unauthenticated'] };

/** A WebSocket client may carry its token in this subprotocol, as kube-apiserver accepts it. */
const WEBSOCKET_TOKEN_PREFIX = 'base64url.bearer.authorization.k8s.io.';

/** Adds system:authenticated the way kube's authenticators do. */
export function withAuthenticatedGroup(groups: readonly string[]): string[] {
  return groups.includes(AUTHENTICATED) ? [...groups] : [...groups, AUTHENTICATED];
}

/**
 * Static bearer tokens (kube's --token-auth-file): each minted token maps to one fixed identity. Tokens are random and
 * opaque; nothing about the identity can be read from them.
 */
export class TokenAuthenticator {
  private readonly users = new Map<string, SandboxUser>();

  mint(user: SandboxUser): string {
    const token = `sandbox-${randomBytes(24).toString('base64url')}`;
    this.users.set(token, { ...user, groups: withAuthenticatedGroup(user.groups) });
    return token;
  }

  authenticate(token: string): SandboxUser | undefined {
    return this.users.get(token);
  }

  /** The token is refused from now on (401), as a deleted ServiceAccount's tokens are. */
  revoke(token: string): void {
    this.users.delete(token);
  }
}

/** The bearer token of a request: the Authorization header, or the WebSocket subprotocol form. */
export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const authorization = headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match ? match[1] : undefined;
  }
  const protocols = headers['sec-websocket-protocol'];
  if (protocols) {
    for (const protocol of protocols.split(',').map((p) => p.trim())) {
      if (protocol.startsWith(WEBSOCKET_TOKEN_PREFIX)) {
        try {
          return Buffer.from(protocol.slice(WEBSOCKET_TOKEN_PREFIX.length), 'base64url').toString('utf8') || undefined;
        } catch {
          return undefined;
        }
      }
    }
  }
  return undefined;
}
