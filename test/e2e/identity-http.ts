/**
 * HTTP to kapi as a user's script sends it, for the identity e2e cases. Every error answer is checked on arrival:
 * no token, password, client secret or signing key the suite has handled may come back in an error body or header.
 */
import type { TokenPair } from './client.js';

export interface Answer<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

/** RFC 6749 §5.2. */
export interface OAuthErrorBody {
  error: string;
  error_description: string;
}

/** A Kubernetes Status. */
export interface StatusBody {
  kind: string;
  apiVersion: string;
  status: string;
  code: number;
  reason: string;
  message: string;
}

export interface ClientCredentials {
  id: string;
  secret: string;
}

/** The seed's default client: id and secret are both the product's short name. */
export const DEFAULT_CLIENT: ClientCredentials = Object.freeze({ id: 'kapi', secret: 'kapi' });

export interface OAuthRequest {
  method?: string;
  /** A form, encoded here, or a raw body sent exactly as given. */
  form?: Record<string, string> | string;
  /** HTTP Basic client authentication (RFC 6749 §2.3.1: id and secret form-encoded, then base64). */
  basic?: ClientCredentials;
  /** The Content-Type; `null` sends none. Default: the form type. */
  contentType?: string | null;
  /** Appended to the path after "?". */
  query?: string;
  headers?: Record<string, string>;
}

const FORM = 'application/x-www-form-urlencoded';
/** Shorter values ("kapi") occur in ordinary text such as realm="kapi"; only distinctive ones are watched. */
const MIN_WATCHED_LENGTH = 8;

export function basicAuthorization(client: ClientCredentials): string {
  const pair = `${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`;
  return `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
}

export class KapiCaller {
  /** Watched value → what it is (the failure message names the kind, never the value). */
  private readonly watched = new Map<string, string>();
  /** How many error answers were inspected, so a suite can show its leak check was not vacuous. */
  errorAnswersInspected = 0;

  /** Values that must never appear in an error answer. */
  remember(kind: string, ...values: (string | undefined)[]): void {
    for (const value of values) {
      if (value !== undefined && value.length >= MIN_WATCHED_LENGTH) this.watched.set(value, kind);
    }
  }

  rememberTokens(pair: Partial<TokenPair>): void {
    this.remember('access token', pair.access_token);
    this.remember('refresh token', pair.refresh_token);
  }

  /** POST (by default) to an /oauth endpoint. */
  oauth<T = OAuthErrorBody>(baseUrl: string, path: string, request: OAuthRequest = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = { ...request.headers };
    const contentType = request.contentType === undefined ? FORM : request.contentType;
    if (contentType !== null) headers['Content-Type'] = contentType;
    if (request.basic) headers.Authorization = basicAuthorization(request.basic);
    const form = request.form;
    const body =
      form === undefined ? undefined : typeof form === 'string' ? form : new URLSearchParams(form).toString();
    const url = `${baseUrl}${path}${request.query ? `?${request.query}` : ''}`;
    return this.send<T>(url, { method: request.method ?? 'POST', headers, body });
  }

  token<T = OAuthErrorBody>(baseUrl: string, form: Record<string, string> | string, request: OAuthRequest = {}) {
    return this.oauth<T>(baseUrl, '/oauth/token', { ...request, form });
  }

  /** The password grant with the client in the body, as the seed's §4.1 shows it; anything but 200 throws. */
  async login(baseUrl: string, username: string, password: string, client = DEFAULT_CLIENT): Promise<TokenPair> {
    const answer = await this.token<TokenPair & OAuthErrorBody>(baseUrl, {
      grant_type: 'password',
      username,
      password,
      client_id: client.id,
      client_secret: client.secret,
    });
    if (answer.status !== 200) throw new Error(`login of ${username} failed: ${answer.status} ${answer.body?.error}`);
    this.rememberTokens(answer.body);
    return answer.body;
  }

  async refresh(baseUrl: string, refreshToken: string, client = DEFAULT_CLIENT) {
    const answer = await this.token<TokenPair & OAuthErrorBody>(baseUrl, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: client.id,
      client_secret: client.secret,
    });
    if (answer.status === 200) this.rememberTokens(answer.body);
    return answer;
  }

  /** A GET with an optional bearer token (or any headers, e.g. another Authorization scheme). */
  get<T = StatusBody>(url: string, auth?: string | Record<string, string>): Promise<Answer<T>> {
    const headers = typeof auth === 'string' ? { Authorization: `Bearer ${auth}` } : (auth ?? {});
    return this.send<T>(url, { method: 'GET', headers });
  }

  private async send<T>(url: string, init: { method: string; headers: Record<string, string>; body?: string }) {
    const res = await fetch(url, { ...init, redirect: 'manual' });
    const text = await res.text();
    const json = res.headers.get('content-type')?.includes('json') && text !== '';
    const answer: Answer<T> = {
      status: res.status,
      headers: res.headers,
      text,
      body: (json ? JSON.parse(text) : text) as T,
    };
    if (res.status >= 400) this.inspect(answer, `${init.method} ${new URL(url).pathname}`);
    return answer;
  }

  private inspect(answer: Answer<unknown>, what: string): void {
    this.errorAnswersInspected++;
    const headerText = [...answer.headers.entries()].map(([name, value]) => `${name}: ${value}`).join('\n');
    for (const [value, kind] of this.watched) {
      if (answer.text.includes(value) || headerText.includes(value)) {
        throw new Error(`the ${answer.status} answer to ${what} carries a ${kind}`);
      }
    }
  }
}
