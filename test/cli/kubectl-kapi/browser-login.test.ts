import { authorizeUrl, browserLogin, signedInUser } from '../../../src/cli/kubectl-kapi/browser-login.js';

const idToken = (claims: Record<string, unknown>) =>
  `eyJhbGciOiJFUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
const tokens = (claims: Record<string, unknown>) => ({
  access_token: 'a',
  refresh_token: 'r',
  expires_in: 60,
  id_token: idToken(claims),
});

describe('signedInUser', () => {
  test('when the ID token is for the client and echoes the nonce, then its preferred_username is the user', () => {
    expect(
      signedInUser(tokens({ aud: 'kubectl', nonce: 'n1', sub: 's', preferred_username: 'alice' }), 'kubectl', 'n1'),
    ).toBe('alice');
    expect(signedInUser(tokens({ aud: ['kubectl'], nonce: 'n1', sub: 'bob' }), 'kubectl', 'n1')).toBe('bob');
  });

  test.each([
    ['another audience', { aud: 'console', nonce: 'n1', sub: 'a' }, 'not for this client'],
    ['another nonce (a replayed sign-in)', { aud: 'kubectl', nonce: 'n2', sub: 'a' }, 'nonce'],
    ['no nonce', { aud: 'kubectl', sub: 'a' }, 'nonce'],
    ['no user', { aud: 'kubectl', nonce: 'n1' }, 'names no user'],
  ])('when the ID token has %s, then the login fails', (_case, claims, message) => {
    expect(() => signedInUser(tokens(claims), 'kubectl', 'n1')).toThrow(message);
  });

  test('when there is no ID token, then the login fails', () => {
    expect(() => signedInUser({ access_token: 'a', refresh_token: 'r', expires_in: 1 }, 'kubectl', 'n')).toThrow(
      'without an ID token',
    );
  });
});

describe('authorizeUrl', () => {
  test('when built, then it asks for a code with PKCE S256, state, nonce and openid at kapi’s authorize endpoint', () => {
    const url = new URL(
      authorizeUrl(
        { server: 'https://kapi.example.com:9443/', clientId: 'kubectl' },
        { redirectUri: 'http://127.0.0.1:5000/callback', challenge: 'c', state: 's', nonce: 'n' },
      ),
    );
    expect(url.origin + url.pathname).toBe('https://kapi.example.com:9443/oauth/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'kubectl',
      redirect_uri: 'http://127.0.0.1:5000/callback',
      code_challenge: 'c',
      code_challenge_method: 'S256',
      scope: 'openid profile',
      state: 's',
      nonce: 'n',
    });
  });
});

describe('browserLogin', () => {
  test('when the browser never comes back, then it fails after the timeout and the listener is gone', async () => {
    let opened = '';
    await expect(
      browserLogin({
        target: { server: 'https://127.0.0.1:1', clientId: 'kubectl' },
        openBrowser: async (url) => {
          opened = url;
        },
        tell: () => undefined,
        timeoutMs: 50,
      }),
    ).rejects.toThrow('no answer from the browser in time');
    const redirect = new URL(new URL(opened).searchParams.get('redirect_uri')!);
    await expect(fetch(`${redirect.origin}/callback`)).rejects.toThrow();
  });

  test('when the listener is called with a wrong state or path, then it refuses and keeps waiting; an error with the right state ends it', async () => {
    let opened = '';
    const login = browserLogin({
      target: { server: 'https://127.0.0.1:1', clientId: 'kubectl' },
      openBrowser: async (url) => {
        opened = url;
      },
      tell: () => undefined,
      timeoutMs: 30_000,
    });
    const outcome = login.then(
      () => 'signed in',
      (err: Error) => err.message,
    );
    while (!opened) await new Promise((resolve) => setTimeout(resolve, 5));
    const request = new URL(opened).searchParams;
    const redirect = new URL(request.get('redirect_uri')!);
    expect((await fetch(`${redirect.origin}/callback?code=x&state=wrong`)).status).toBe(400);
    expect((await fetch(`${redirect.origin}/other`)).status).toBe(404);
    expect(request.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // the right state with an error ends it
    const denied = await fetch(`${redirect.origin}/callback?error=access_denied&state=${request.get('state')}`);
    expect(denied.status).toBe(400);
    expect(await outcome).toBe('the sign-in failed: access_denied');
  });
});
