import { spawn } from 'node:child_process';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { authorizationCodeGrant, type OAuthTarget, type TokenResponse } from './oauth-client.js';

/**
 * `kubectl kapi login --browser`: sign in through kapi's authorization endpoint in the user's browser, as a native
 * app does it (RFC 8252): the code comes back to a listener on 127.0.0.1 at a port the system chose (§7.3), the
 * request carries a PKCE S256 challenge (§8.1), a random state that the answer must carry back, and a nonce the ID
 * token must echo. The browser is the system's, never one embedded here (§8.12): the user's single sign-on and
 * password manager work, and the plugin never sees a password.
 */
export interface BrowserLoginOptions {
  target: OAuthTarget;
  /** Opens the URL in the user's browser; a failure only means the user opens it by hand. */
  openBrowser: (url: string) => Promise<void>;
  /** Where the plugin talks to the user (stderr: stdout belongs to kubectl). */
  tell: (line: string) => void;
  /** How long to wait for the browser to come back; default 5 minutes. */
  timeoutMs?: number;
}

export interface BrowserLoginResult {
  tokens: TokenResponse;
  /** The user who signed in, from the ID token. */
  username: string;
}

const CALLBACK_PATH = '/callback';
const DEFAULT_TIMEOUT_MS = 5 * 60_000;

export async function browserLogin(options: BrowserLoginOptions): Promise<BrowserLoginResult> {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const state = randomBytes(24).toString('base64url');
  const nonce = randomBytes(24).toString('base64url');

  let settle!: { resolve: (result: BrowserLoginResult) => void; reject: (err: Error) => void };
  const done = new Promise<BrowserLoginResult>((resolve, reject) => (settle = { resolve, reject }));
  let redirectUri = '';
  let handled = false;

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH) {
      page(res, 404, 'Not found', 'This address only receives the sign-in of kubectl kapi login.');
      return;
    }
    // anything on this machine can call the listener: only the answer carrying our state counts
    if (!sameText(url.searchParams.get('state') ?? '', state) || handled) {
      page(res, 400, 'Sign-in not accepted', 'This answer does not belong to the sign-in kubectl is waiting for.');
      return;
    }
    handled = true;
    void finish(req, res, url.searchParams).then(settle.resolve, settle.reject);
  });

  async function finish(
    _req: IncomingMessage,
    res: ServerResponse,
    params: URLSearchParams,
  ): Promise<BrowserLoginResult> {
    const error = params.get('error');
    const code = params.get('code');
    if (error || !code) {
      const reason = error
        ? `${error}${params.get('error_description') ? `: ${params.get('error_description')}` : ''}`
        : 'no code';
      page(res, 400, 'Sign-in failed', `kapi answered ${reason}. Go back to the terminal.`);
      throw new Error(`the sign-in failed: ${reason}`);
    }
    try {
      const tokens = await authorizationCodeGrant(options.target, code, redirectUri, verifier);
      const username = signedInUser(tokens, options.target.clientId, nonce);
      page(
        res,
        200,
        'Signed in to kapi',
        `You are signed in as ${username}. You can close this tab and go back to the terminal.`,
      );
      return { tokens, username };
    } catch (err) {
      page(res, 502, 'Sign-in failed', 'kubectl could not complete the sign-in. Go back to the terminal.');
      throw err;
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const timer = setTimeout(
    () => settle.reject(new Error('no answer from the browser in time; run kubectl kapi login --browser again')),
    options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  );
  try {
    redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}${CALLBACK_PATH}`;
    const url = authorizeUrl(options.target, { redirectUri, challenge, state, nonce });
    options.tell(`Sign in to kapi in your browser. If it does not open, open this address:\n\n  ${url}\n`);
    await options.openBrowser(url).catch(() => undefined);
    return await done;
  } finally {
    clearTimeout(timer);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

export function authorizeUrl(
  target: OAuthTarget,
  request: { redirectUri: string; challenge: string; state: string; nonce: string },
): string {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: target.clientId,
    redirect_uri: request.redirectUri,
    code_challenge: request.challenge,
    code_challenge_method: 'S256',
    scope: 'openid profile',
    state: request.state,
    nonce: request.nonce,
  });
  return `${target.server.replace(/\/+$/, '')}/oauth/authorize?${query.toString()}`;
}

/**
 * The user the ID token names, after checking it is for this client and answers this sign-in's nonce. Its signature
 * is not checked: it came straight from kapi's token endpoint over verified TLS (OpenID Connect Core §3.1.3.7).
 */
export function signedInUser(tokens: TokenResponse, clientId: string, nonce: string): string {
  if (!tokens.id_token) throw new Error('the token endpoint answered without an ID token');
  let claims: { aud?: unknown; nonce?: unknown; sub?: unknown; preferred_username?: unknown };
  try {
    claims = JSON.parse(
      Buffer.from(tokens.id_token.split('.')[1] ?? '', 'base64url').toString('utf8'),
    ) as typeof claims;
  } catch {
    throw new Error('the ID token cannot be read');
  }
  const audience = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audience.includes(clientId)) throw new Error('the ID token is not for this client');
  if (typeof claims.nonce !== 'string' || !sameText(claims.nonce, nonce)) {
    throw new Error('the ID token does not answer this sign-in (nonce)');
  }
  const username = typeof claims.preferred_username === 'string' ? claims.preferred_username : claims.sub;
  if (typeof username !== 'string' || username === '') throw new Error('the ID token names no user');
  return username;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function page(res: ServerResponse, status: number, title: string, text: string): void {
  const escape = (value: string) =>
    value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
  res
    .writeHead(status, {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
    })
    .end(
      `<!doctype html><html lang="en"><meta charset="utf-8"><title>${escape(title)}</title>` +
        `<h1>${escape(title)}</h1><p>${escape(text)}</p></html>`,
    );
}

/**
 * Opens a URL in the user's browser: the command in $BROWSER (the URL as its last argument), else the platform's
 * opener. It never waits for the browser to close.
 */
export function systemBrowser(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform) {
  return (url: string): Promise<void> => {
    const [command, ...args] = env.BROWSER
      ? [...env.BROWSER.split(' ').filter((part) => part !== ''), url]
      : platform === 'darwin'
        ? ['open', url]
        : platform === 'win32'
          ? ['rundll32', 'url.dll,FileProtocolHandler', url]
          : ['xdg-open', url];
    return new Promise((resolve, reject) => {
      const child = spawn(command!, args, { stdio: 'ignore', detached: true });
      child.once('error', reject);
      child.once('spawn', () => {
        child.unref();
        resolve();
      });
    });
  };
}
