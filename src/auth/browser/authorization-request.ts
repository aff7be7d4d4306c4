import type { OAuthClient } from '../../config/cluster-configuration.js';
import { isRegisteredRedirect } from './redirect-uris.js';
import type { RequestParameters } from './request-parameters.js';

/**
 * An authorization request (RFC 6749 §4.1.1 with RFC 7636 PKCE and OpenID Connect Core §3.1.2.1), checked by a
 * chain of small pure functions, in the order their failures must be answered:
 *
 * 1. who is asking and where the answer goes (`client_id`, `redirect_uri`): until both are proven, a problem is shown
 *    on kapi's own page and the browser is never sent anywhere (RFC 6749 §4.1.2.1; an unchecked redirect would make
 *    kapi an open redirector, RFC 9700 §4.11);
 * 2. everything else: a problem goes back to the client's redirect URI as `error` (with `state` and `iss`).
 *
 * Only the authorization code flow exists (no implicit grant, RFC 9700 §2.1.2), and every request carries a PKCE
 * S256 challenge (RFC 9700 §2.1.1), public and confidential clients alike.
 */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  state?: string;
  /** BASE64URL(SHA256(code_verifier)), 43 characters. */
  codeChallenge: string;
  /** The scopes granted, in the order of SUPPORTED_SCOPES. */
  scope: string[];
  nonce?: string;
  /** `login`: authenticate again even with a browser session; `none`: never show a page. */
  prompt?: 'none' | 'login';
  /** Seconds since the last authentication beyond which the user authenticates again (OIDC `max_age`). */
  maxAge?: number;
  /** A user name to fill in on the login page. */
  loginHint?: string;
}

export type AuthorizationErrorCode =
  | 'invalid_request'
  | 'unauthorized_client'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'login_required'
  | 'consent_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'registration_not_supported';

/**
 * A refused authorization request. `redirect` is where the error may be sent: absent while the client and its
 * redirect URI are not proven, so the error is shown on kapi's page. Descriptions name parameters, never their values.
 */
export class AuthorizationError extends Error {
  constructor(
    readonly error: AuthorizationErrorCode,
    readonly description: string,
    readonly redirect?: { uri: string; state?: string },
  ) {
    super(`${error}: ${description}`);
    this.name = 'AuthorizationError';
  }
}

export const SUPPORTED_SCOPES = ['openid', 'profile', 'email', 'groups', 'offline_access'] as const;
/** `plain` is never accepted (RFC 9700 §2.1.1): the challenge would travel with the code it protects. */
export const CODE_CHALLENGE_METHODS = ['S256'] as const;

const MAX_STATE_LENGTH = 2048;
const MAX_NONCE_LENGTH = 512;
const MAX_LOGIN_HINT_LENGTH = 256;
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const MAX_AGE = /^(0|[1-9][0-9]{0,9})$/;

interface CheckInput {
  parameters: RequestParameters;
  clients: readonly OAuthClient[];
}

/** What the chain has established so far; each check reads it and adds to it. */
interface Checked {
  client?: OAuthClient;
  request: Partial<AuthorizationRequest>;
}

type Check = (input: CheckInput, checked: Checked) => void;

/** The checks in order. Each throws an `AuthorizationError`; the first to fail decides the answer. */
export const AUTHORIZATION_CHECKS: readonly Check[] = [
  checkEncoding,
  checkClient,
  checkRedirectUri,
  checkState,
  checkRequestObjects,
  checkRepeatedParameters,
  checkResponseType,
  checkResponseMode,
  checkPkce,
  checkScope,
  checkNonce,
  checkPrompt,
  checkMaxAge,
  checkLoginHint,
];

/** The request, or the `AuthorizationError` of the first check that fails. */
export function checkAuthorizationRequest(
  parameters: RequestParameters,
  clients: readonly OAuthClient[],
): AuthorizationRequest {
  const checked: Checked = { request: {} };
  for (const check of AUTHORIZATION_CHECKS) check({ parameters, clients }, checked);
  return checked.request as AuthorizationRequest;
}

/** An error before the redirect URI is proven: kapi's own page shows it. */
function onPage(description: string): AuthorizationError {
  return new AuthorizationError('invalid_request', description);
}

/** An error the client hears about at its redirect URI. */
function toClient(checked: Checked, error: AuthorizationErrorCode, description: string): AuthorizationError {
  return new AuthorizationError(error, description, {
    uri: checked.request.redirectUri!,
    state: checked.request.state,
  });
}

function checkEncoding({ parameters }: CheckInput): void {
  if (parameters.malformed) throw onPage('the request is not valid URL encoding (or has too many parameters)');
}

function checkClient({ parameters, clients }: CheckInput, checked: Checked): void {
  if (parameters.repeated.has('client_id')) throw onPage('client_id is given more than once');
  const clientId = parameters.values.get('client_id');
  if (clientId === undefined) throw onPage('client_id is missing');
  const client = clients.find((candidate) => candidate.name === clientId);
  // the same words for an unknown client as for one that may not sign users in here: nothing to probe
  if (!client || !client.grantTypes.includes('authorization_code')) {
    throw onPage('the client is not registered for sign-in from a browser');
  }
  checked.client = client;
  checked.request.clientId = client.name;
}

function checkRedirectUri({ parameters }: CheckInput, checked: Checked): void {
  if (parameters.repeated.has('redirect_uri')) throw onPage('redirect_uri is given more than once');
  const redirectUri = parameters.values.get('redirect_uri');
  if (redirectUri === undefined)
    throw onPage('redirect_uri is missing (it is required, as OpenID Connect requires it)');
  if (!isRegisteredRedirect(redirectUri, checked.client!.redirectURIs)) {
    throw onPage('redirect_uri is not one the client registered');
  }
  checked.request.redirectUri = redirectUri;
}

function checkState({ parameters }: CheckInput, checked: Checked): void {
  if (parameters.repeated.has('state')) throw toClient(checked, 'invalid_request', 'state is given more than once');
  const state = parameters.values.get('state');
  if (state !== undefined && state.length > MAX_STATE_LENGTH) {
    throw toClient(checked, 'invalid_request', `state is longer than ${MAX_STATE_LENGTH} characters`);
  }
  checked.request.state = state;
}

function checkRequestObjects({ parameters }: CheckInput, checked: Checked): void {
  if (parameters.values.has('request') || parameters.repeated.has('request')) {
    throw toClient(checked, 'request_not_supported', 'request objects are not supported');
  }
  if (parameters.values.has('request_uri') || parameters.repeated.has('request_uri')) {
    throw toClient(checked, 'request_uri_not_supported', 'request_uri is not supported');
  }
  if (parameters.values.has('registration') || parameters.repeated.has('registration')) {
    throw toClient(checked, 'registration_not_supported', 'registration is not supported');
  }
}

function checkRepeatedParameters({ parameters }: CheckInput, checked: Checked): void {
  const [repeated] = [...parameters.repeated].sort();
  if (repeated !== undefined) {
    throw toClient(checked, 'invalid_request', `parameter "${printable(repeated)}" is given more than once`);
  }
}

function checkResponseType({ parameters }: CheckInput, checked: Checked): void {
  const responseType = parameters.values.get('response_type');
  if (responseType === undefined) throw toClient(checked, 'invalid_request', 'response_type is missing');
  if (responseType !== 'code') {
    throw toClient(
      checked,
      'unsupported_response_type',
      'only response_type=code is supported (authorization code with PKCE; no implicit or hybrid flow)',
    );
  }
}

function checkResponseMode({ parameters }: CheckInput, checked: Checked): void {
  const mode = parameters.values.get('response_mode');
  if (mode !== undefined && mode !== 'query') {
    throw toClient(checked, 'invalid_request', 'only response_mode=query is supported');
  }
}

function checkPkce({ parameters }: CheckInput, checked: Checked): void {
  const challenge = parameters.values.get('code_challenge');
  const method = parameters.values.get('code_challenge_method');
  if (challenge === undefined) {
    throw toClient(checked, 'invalid_request', 'code_challenge is required (PKCE with S256, RFC 7636)');
  }
  if (method !== 'S256') {
    throw toClient(checked, 'invalid_request', 'code_challenge_method must be S256');
  }
  if (!S256_CHALLENGE.test(challenge)) {
    throw toClient(checked, 'invalid_request', 'code_challenge must be 43 base64url characters (an S256 digest)');
  }
  checked.request.codeChallenge = challenge;
}

function checkScope({ parameters }: CheckInput, checked: Checked): void {
  const asked = (parameters.values.get('scope') ?? '').split(' ').filter((scope) => scope !== '');
  const unknown = asked.find((scope) => !(SUPPORTED_SCOPES as readonly string[]).includes(scope));
  if (unknown !== undefined) {
    throw toClient(
      checked,
      'invalid_scope',
      `scope "${printable(unknown)}" is not supported (${SUPPORTED_SCOPES.join(', ')})`,
    );
  }
  checked.request.scope = SUPPORTED_SCOPES.filter((scope) => asked.includes(scope));
}

function checkNonce({ parameters }: CheckInput, checked: Checked): void {
  const nonce = parameters.values.get('nonce');
  if (nonce !== undefined && nonce.length > MAX_NONCE_LENGTH) {
    throw toClient(checked, 'invalid_request', `nonce is longer than ${MAX_NONCE_LENGTH} characters`);
  }
  checked.request.nonce = nonce;
}

/** `consent` and `select_account` are accepted and need nothing: clients are registered by the cluster's operator. */
function checkPrompt({ parameters }: CheckInput, checked: Checked): void {
  const values = (parameters.values.get('prompt') ?? '').split(' ').filter((value) => value !== '');
  for (const value of values) {
    if (!['none', 'login', 'consent', 'select_account'].includes(value)) {
      throw toClient(checked, 'invalid_request', 'prompt must be none, login, consent or select_account');
    }
  }
  if (values.includes('none') && values.length > 1) {
    throw toClient(checked, 'invalid_request', 'prompt=none cannot be combined with other values');
  }
  checked.request.prompt = values.includes('none') ? 'none' : values.includes('login') ? 'login' : undefined;
}

function checkMaxAge({ parameters }: CheckInput, checked: Checked): void {
  const maxAge = parameters.values.get('max_age');
  if (maxAge === undefined) return;
  if (!MAX_AGE.test(maxAge)) throw toClient(checked, 'invalid_request', 'max_age must be a whole number of seconds');
  checked.request.maxAge = Number(maxAge);
}

function checkLoginHint({ parameters }: CheckInput, checked: Checked): void {
  const hint = parameters.values.get('login_hint');
  if (hint !== undefined && hint.length <= MAX_LOGIN_HINT_LENGTH) checked.request.loginHint = hint;
}

/** A parameter name fit to quote: short, letters, digits and a few marks only. */
function printable(text: string): string {
  const safe = text.replace(/[^A-Za-z0-9_.:-]/g, '?');
  return safe.length > 64 ? `${safe.slice(0, 64)}…` : safe;
}
