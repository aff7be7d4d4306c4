import { request as httpsRequest } from 'node:https';

/** kapi's OAuth endpoints over HTTPS, with the server's CA when one is given (else the system's trust store). */
export interface OAuthTarget {
  server: string;
  caPem?: string;
  clientId: string;
  /** Absent for a public client (such as `kubectl`), which sends its client_id alone. */
  clientSecret?: string;
}

export interface TokenResponse {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  /** authorization_code grant with the openid scope. */
  id_token?: string;
}

/** An RFC 6749 error answer: `invalid_grant` means the credentials or the refresh token are no longer good. */
export class OAuthRequestError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    description: string,
  ) {
    super(`${error}: ${description}`);
    this.name = 'OAuthRequestError';
  }
}

const TIMEOUT_MS = 30_000;
/** A token answer is a few KiB; one larger than this is refused, never read whole (a hostile or broken server). */
export const MAX_ANSWER_BYTES = 2 ** 20;

export function passwordGrant(target: OAuthTarget, username: string, password: string): Promise<TokenResponse> {
  return tokenRequest(target, { grant_type: 'password', username, password });
}

export function refreshGrant(target: OAuthTarget, refreshToken: string): Promise<TokenResponse> {
  return tokenRequest(target, { grant_type: 'refresh_token', refresh_token: refreshToken });
}

/** RFC 6749 §4.1.3 with the PKCE verifier (RFC 7636 §4.5). */
export function authorizationCodeGrant(
  target: OAuthTarget,
  code: string,
  redirectUri: string,
  codeVerifier: string,
): Promise<TokenResponse> {
  return tokenRequest(target, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    code_verifier: codeVerifier,
  });
}

/** RFC 7009: revoking the refresh token ends the whole login session on the server. */
export async function revoke(target: OAuthTarget, token: string): Promise<void> {
  await post(target, 'oauth/revoke', { token, token_type_hint: 'refresh_token' });
}

async function tokenRequest(target: OAuthTarget, form: Record<string, string>): Promise<TokenResponse> {
  const body = (await post(target, 'oauth/token', form)) as Partial<TokenResponse>;
  if (
    typeof body?.access_token !== 'string' ||
    typeof body.refresh_token !== 'string' ||
    body.access_token === '' ||
    body.refresh_token === '' ||
    typeof body.expires_in !== 'number'
  ) {
    throw new Error('the token endpoint answered without access_token, refresh_token and expires_in');
  }
  return body as TokenResponse;
}

async function post(target: OAuthTarget, path: string, form: Record<string, string>): Promise<unknown> {
  const url = new URL(path, withSlash(target.server));
  const body = new URLSearchParams({
    ...form,
    client_id: target.clientId,
    ...(target.clientSecret === undefined ? {} : { client_secret: target.clientSecret }),
  });
  const answer = await httpsJson(url, {
    method: 'POST',
    caPem: target.caPem,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
  });
  if (answer.status === 200) return answer.json;
  const error = (answer.json ?? {}) as { error?: unknown; error_description?: unknown };
  throw new OAuthRequestError(
    answer.status,
    typeof error.error === 'string' ? error.error : `HTTP ${answer.status}`,
    typeof error.error_description === 'string' ? error.error_description : `${url.pathname} failed`,
  );
}

/**
 * One HTTPS request with a JSON answer (parsed, or undefined when it is not JSON), verified against `caPem` when
 * given (else the system's trust store). An answer over `MAX_ANSWER_BYTES` is refused, never read whole.
 */
export function httpsJson(
  url: URL,
  request: { method: string; caPem?: string; headers: Record<string, string>; body?: string },
): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method: request.method,
        ca: request.caPem,
        timeout: TIMEOUT_MS,
        headers: { Accept: 'application/json', ...request.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const tooLarge = () => {
          reject(new Error(`${url.origin}${url.pathname} answered more than ${MAX_ANSWER_BYTES} bytes; refused`));
          req.destroy();
        };
        if (Number(res.headers['content-length']) > MAX_ANSWER_BYTES) {
          tooLarge();
          return;
        }
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) tooLarge();
          else chunks.push(chunk);
        });
        res.on('error', (err) => reject(err));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url.origin} within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', (err) => reject(new Error(`cannot reach ${url.origin}: ${err.message}`, { cause: err })));
    req.end(request.body);
  });
}

export function withSlash(server: string): string {
  return server.endsWith('/') ? server : `${server}/`;
}
