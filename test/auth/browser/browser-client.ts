/**
 * A browser and an OAuth client in a test, over supertest: the browser keeps kapi's cookies (as a browser would
 * for kapi's origin) and follows nothing by itself, so each step's answer can be checked; the client makes PKCE
 * pairs and reads what comes back at its redirect URI.
 */
import { createHash, randomBytes } from 'node:crypto';
import type express from 'express';
import request from 'supertest';

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export const CONSOLE = {
  name: 'console',
  secret: 'console-secret',
  public: false,
  grantTypes: ['authorization_code', 'refresh_token'] as const,
  redirectURIs: ['https://console.example.com/oauth/callback'],
};
export const KUBECTL = {
  name: 'kubectl',
  secret: undefined,
  public: true,
  grantTypes: ['authorization_code', 'refresh_token'] as const,
  redirectURIs: ['http://127.0.0.1/callback', 'http://[::1]/callback'],
};

export class TestBrowser {
  readonly cookies = new Map<string, string>();

  constructor(
    private readonly app: express.Express,
    private readonly ip = '192.0.2.50',
  ) {}

  get(url: string) {
    return this.keep(request(this.app).get(url).set('X-Forwarded-For', this.ip).set('Cookie', this.cookieHeader()));
  }

  post(url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
    let req = request(this.app).post(url).set('X-Forwarded-For', this.ip).set('Cookie', this.cookieHeader());
    for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
    return this.keep(req.type('form').send(new URLSearchParams(form).toString()));
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private async keep(req: request.Test): Promise<request.Response> {
    const res = await req;
    const setCookies = res.headers['set-cookie'] as unknown as string[] | undefined;
    for (const line of setCookies ?? []) {
      const [pair, ...attributes] = line.split(';').map((part) => part.trim());
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (value === '' || attributes.some((a) => a.toLowerCase() === 'max-age=0')) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }
}

export interface AuthorizeOptions {
  client?: string;
  redirectUri?: string;
  scope?: string;
  state?: string;
  nonce?: string;
  challenge?: string;
  extra?: Record<string, string>;
}

export function authorizeUrl(options: AuthorizeOptions & { challenge: string }): string {
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: options.client ?? CONSOLE.name,
    redirect_uri: options.redirectUri ?? CONSOLE.redirectURIs[0]!,
    code_challenge: options.challenge,
    code_challenge_method: 'S256',
    ...(options.scope === undefined
      ? { scope: 'openid profile email groups' }
      : options.scope
        ? { scope: options.scope }
        : {}),
    state: options.state ?? 'st-123',
    ...(options.nonce ? { nonce: options.nonce } : {}),
    ...options.extra,
  });
  return `/oauth/authorize?${params.toString()}`;
}

/** The hidden fields of the login page's first form. */
export function formFields(html: string): { request: string; csrf: string } {
  const request = /name="request" value="([^"]*)"/.exec(html)?.[1];
  const csrf = /name="csrf" value="([^"]*)"/.exec(html)?.[1];
  if (!request || !csrf) throw new Error('no login form in the page');
  return { request: unescape(request), csrf: unescape(csrf) };
}

function unescape(value: string): string {
  return value
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}

/** The parameters a redirect to the client carries. */
export function redirected(res: request.Response): { base: string; params: URLSearchParams } {
  if (res.status !== 303) throw new Error(`expected a 303, got ${res.status}: ${res.text.slice(0, 300)}`);
  const location = res.headers.location as string;
  const at = location.indexOf('?');
  return {
    base: at < 0 ? location : location.slice(0, at),
    params: new URLSearchParams(at < 0 ? '' : location.slice(at + 1)),
  };
}

/**
 * The whole sign-in on the login page: authorize, follow to the login page, post the password; the answer of the
 * form post (a 303 to the client on success).
 */
export async function signIn(
  browser: TestBrowser,
  username: string,
  password: string,
  options: AuthorizeOptions & { challenge: string },
): Promise<request.Response> {
  const started = await browser.get(authorizeUrl(options));
  if (started.status !== 303) throw new Error(`authorize answered ${started.status}: ${started.text.slice(0, 300)}`);
  const loginUrl = started.headers.location as string;
  if (!loginUrl.startsWith('/oauth/login?')) return started;
  const page = await browser.get(loginUrl);
  if (page.status !== 200) throw new Error(`login page answered ${page.status}`);
  return browser.post('/oauth/login', { ...formFields(page.text), username, password, action: 'login' });
}

/** A code for `username`, through the login page. */
export async function codeFor(
  browser: TestBrowser,
  username: string,
  password: string,
  options: AuthorizeOptions & { challenge: string },
): Promise<string> {
  const res = await signIn(browser, username, password, options);
  const code = redirected(res).params.get('code');
  if (!code) throw new Error(`no code: ${res.headers.location as string}`);
  return code;
}

export function exchange(app: express.Express, form: Record<string, string>) {
  return request(app)
    .post('/oauth/token')
    .set('X-Forwarded-For', '192.0.2.60')
    .type('form')
    .send(new URLSearchParams(form).toString());
}

export function consoleExchange(
  app: express.Express,
  code: string,
  verifier: string,
  extra: Record<string, string> = {},
) {
  return exchange(app, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: CONSOLE.redirectURIs[0]!,
    code_verifier: verifier,
    client_id: CONSOLE.name,
    client_secret: CONSOLE.secret,
    ...extra,
  });
}
