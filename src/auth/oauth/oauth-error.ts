/**
 * An error answer of the OAuth endpoints, RFC 6749 §5.2: `{"error","error_description"}` with its HTTP status and
 * headers. Only the /oauth error handler writes it. Descriptions are fixed texts or name a parameter; they never
 * carry a submitted value (a password typed into the wrong field must not come back in a body or a log).
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_token'
  | 'temporarily_unavailable'
  | 'server_error'
  | 'insufficient_scope';

export class OAuthError extends Error {
  /** Why, for the audit log only (e.g. "unknown user" behind the uniform "invalid username or password"). */
  auditReason?: string;

  constructor(
    readonly status: number,
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(`${error}: ${description}`);
    this.name = 'OAuthError';
  }

  /** The same error, noting the internal reason for the audit line. */
  because(reason: string): this {
    this.auditReason = reason;
    return this;
  }

  body(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

/** The one description for every failed password login, so an answer never tells whether a user exists. */
export const BAD_CREDENTIALS = 'invalid username or password';
/** The one description for every refused refresh token (bad, expired, reused, revoked, user gone). */
export const BAD_REFRESH_TOKEN = 'the refresh token is invalid, expired or revoked';
/** The one description of a refused login while a limit holds, for a locked user and a limited address alike. */
export const TOO_MANY_ATTEMPTS = 'too many failed login attempts; try again after the time in Retry-After';

export const invalidRequest = (description: string) => new OAuthError(400, 'invalid_request', description);

/** RFC 6749 §5.2: a client that tried HTTP Basic is answered with a Basic challenge. */
export const invalidClient = (usedBasic: boolean) =>
  new OAuthError(
    401,
    'invalid_client',
    'client authentication failed',
    usedBasic ? { 'WWW-Authenticate': 'Basic realm="kapi"' } : {},
  );

export const invalidGrant = (description: string) => new OAuthError(400, 'invalid_grant', description);

export const unauthorizedClient = (grantType: string) =>
  new OAuthError(400, 'unauthorized_client', `the client is not allowed the grant type "${grantType}"`);

export const unsupportedGrantType = () =>
  new OAuthError(
    400,
    'unsupported_grant_type',
    'grant_type must be "password", "refresh_token" or "authorization_code"',
  );

export const tooManyAttempts = (retryAfterSeconds: number) =>
  new OAuthError(429, 'invalid_grant', TOO_MANY_ATTEMPTS, { 'Retry-After': String(Math.max(1, retryAfterSeconds)) });

export const temporarilyUnavailable = (description: string) =>
  new OAuthError(503, 'temporarily_unavailable', description, { 'Retry-After': '1' });
