/**
 * kapi's OIDC provider (openid-client) against a real certified OpenID provider (oidc-provider) on loopback HTTPS, and
 * against a hostile one that hands out ID tokens it should not: every way an answer can be untrustworthy is refused,
 * and a provider that cannot be asked is unavailable (503), never a failed login.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import { Agent, fetch as undiciFetch } from 'undici';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { OidcProvider } from '../../../../src/auth/providers/oidc/oidc-provider.js';
import { ProviderUnavailable, UpstreamLoginRefused } from '../../../../src/auth/providers/identity-provider.js';
import type { OidcProviderSettings } from '../../../../src/config/identity-providers/index.js';
import {
  loopbackCertificate,
  startOidcTestProvider,
  type OidcTestProvider,
} from '../../../support/oidc-test-provider.js';
import { capturingLogger } from '../../fakes.js';

const CALLBACK = 'http://127.0.0.1:9/oauth/callback/corp';
let op: OidcTestProvider;

beforeAll(async () => {
  op = await startOidcTestProvider({ redirectUris: [CALLBACK] });
  op.accounts.set('ursula', { password: 'upstream-pw', email: 'ursula@corp.test', groups: ['sre', 'devs'] });
}, 30_000);

afterAll(async () => {
  await op?.close();
});

function settings(oidc: Partial<OidcProviderSettings['oidc']> = {}, issuer = op.issuer): OidcProviderSettings {
  return {
    name: 'corp',
    type: 'OIDC',
    mappingMethod: 'auto',
    groupPrefix: '',
    oidc: {
      issuer,
      clientID: op.clientId,
      clientSecret: op.clientSecret,
      scopes: ['openid', 'profile', 'email', 'groups'],
      usernameClaim: 'preferred_username',
      emailClaim: 'email',
      groupsClaim: 'groups',
      caPem: op.caPem,
      timeoutSeconds: 5,
      ...oidc,
    },
  };
}

function bound() {
  const codeVerifier = randomBytes(32).toString('base64url');
  return {
    callbackUrl: CALLBACK,
    state: randomBytes(16).toString('base64url'),
    nonce: randomBytes(16).toString('base64url'),
    codeVerifier,
    codeChallenge: createHash('sha256').update(codeVerifier).digest('base64url'),
  };
}

/** A browser at the provider: follows its redirects with its cookies, signs in, and returns the callback's query. */
async function browserAt(url: string, login = 'ursula', password = 'upstream-pw'): Promise<URLSearchParams> {
  const dispatcher = new Agent({ connect: { ca: op.caPem } });
  const cookies = new Map<string, string>();
  const go = async (target: string, init: { method?: string; body?: string } = {}) => {
    const res = await undiciFetch(target, {
      method: init.method ?? 'GET',
      body: init.body,
      redirect: 'manual',
      dispatcher,
      headers: {
        Cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(init.body ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
      },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    await res.arrayBuffer();
    return res;
  };
  let res = await go(url);
  for (let hops = 0; hops < 10; hops++) {
    const location = res.headers.get('location');
    if (!location) break;
    const next = new URL(location, op.issuer);
    if (next.href.startsWith(CALLBACK)) return next.searchParams;
    res = await go(next.href);
  }
  const form = new URL(res.url).pathname;
  res = await go(`${op.issuer}${form}`, {
    method: 'POST',
    body: new URLSearchParams({ login, password }).toString(),
  });
  for (let hops = 0; hops < 10; hops++) {
    const location = res.headers.get('location');
    if (!location) throw new Error(`the provider answered ${res.status} without a redirect`);
    const next = new URL(location, op.issuer);
    if (next.href.startsWith(CALLBACK)) return next.searchParams;
    res = await go(next.href);
  }
  throw new Error('too many redirects');
}

describe('an OIDC provider backed by a real OpenID provider', () => {
  test('when a user signs in upstream, then the answer proves the identity: sub, name, e-mail and groups', async () => {
    const provider = new OidcProvider(settings(), capturingLogger().logger);
    const expected = bound();
    const url = new URL(await provider.loginUrl(expected));
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: op.clientId,
      redirect_uri: CALLBACK,
      scope: 'openid profile email groups',
      state: expected.state,
      nonce: expected.nonce,
      code_challenge: expected.codeChallenge,
      code_challenge_method: 'S256',
    });
    const answer = await browserAt(url.href);
    expect(answer.get('iss')).toBe(op.issuer);
    await expect(provider.handleCallback(answer, expected)).resolves.toEqual({
      provider: 'corp',
      userId: 'ursula',
      username: 'ursula',
      email: 'ursula@corp.test',
      groups: ['sre', 'devs'],
    });
    await provider.close();
  }, 30_000);

  test.each([
    ['the state differs (a forged answer)', (e: ReturnType<typeof bound>) => ({ ...e, state: 'forged' })],
    ['the nonce differs (a replayed ID token)', (e: ReturnType<typeof bound>) => ({ ...e, nonce: 'other' })],
    [
      'the code_verifier differs (a stolen code)',
      (e: ReturnType<typeof bound>) => ({ ...e, codeVerifier: bound().codeVerifier }),
    ],
  ])(
    'when %s, then the answer is refused',
    async (_case, alter) => {
      const provider = new OidcProvider(settings(), capturingLogger().logger);
      const expected = bound();
      const answer = await browserAt(await provider.loginUrl(expected));
      await expect(provider.handleCallback(answer, alter(expected))).rejects.toBeInstanceOf(UpstreamLoginRefused);
      await provider.close();
    },
    30_000,
  );

  test('when the same answer is handled twice (a replayed code), then the second is refused by the provider', async () => {
    const provider = new OidcProvider(settings(), capturingLogger().logger);
    const expected = bound();
    const answer = await browserAt(await provider.loginUrl(expected));
    await provider.handleCallback(answer, expected);
    await expect(provider.handleCallback(answer, expected)).rejects.toBeInstanceOf(UpstreamLoginRefused);
    await provider.close();
  }, 30_000);

  test('when the user cannot sign in upstream and the provider answers an error, then it is refused', async () => {
    const provider = new OidcProvider(settings(), capturingLogger().logger);
    const expected = bound();
    const answer = new URLSearchParams({ error: 'access_denied', state: expected.state, iss: op.issuer });
    const refusal = provider.handleCallback(answer, expected);
    await expect(refusal).rejects.toBeInstanceOf(UpstreamLoginRefused);
    await expect(refusal).rejects.toThrow('access_denied');
    await provider.close();
  });

  test('when the provider’s certificate is not signed by a CA kapi trusts, then it is unavailable (503), not a failure', async () => {
    const provider = new OidcProvider(settings({ caPem: undefined }), capturingLogger().logger);
    await expect(provider.loginUrl(bound())).rejects.toBeInstanceOf(ProviderUnavailable);
    await provider.close();
  });

  test('when nothing listens at the issuer, then it is unavailable', async () => {
    const provider = new OidcProvider(settings({}, 'https://127.0.0.1:9/'), capturingLogger().logger);
    await expect(provider.loginUrl(bound())).rejects.toBeInstanceOf(ProviderUnavailable);
    await provider.close();
  });

  test('when the provider says the e-mail is not verified, then it is not taken', async () => {
    op.accounts.set('victor', { password: 'pw-victor', email: 'admin@corp.test', emailVerified: false });
    const provider = new OidcProvider(settings(), capturingLogger().logger);
    const expected = bound();
    const answer = await browserAt(await provider.loginUrl(expected), 'victor', 'pw-victor');
    const identity = await provider.handleCallback(answer, expected);
    expect(identity.email).toBeUndefined();
    await provider.close();
  }, 30_000);
});

/**
 * A hostile provider: discovery, keys and a token endpoint whose ID token is whatever the case sets. The answers it
 * gives a real provider would never give; kapi must refuse each.
 */
interface Hostile {
  issuer: string;
  caPem: string;
  /** The ID token the token endpoint answers with next (built per request from the posted code). */
  idToken: () => Promise<string>;
  key: CryptoKey;
  otherKey: CryptoKey;
  close(): Promise<void>;
}

async function startHostile(): Promise<Hostile> {
  const { ca, serving: cert } = await loopbackCertificate('hostile');
  const { privateKey: key, publicKey } = await generateKeyPair('RS256');
  const { privateKey: otherKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const hostile: Partial<Hostile> = { key, otherKey };
  const server: Server = createServer({ key: cert.private, cert: cert.cert }, (req, res) => {
    const json = (body: unknown) =>
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(JSON.stringify(body));
    if (req.url === '/.well-known/openid-configuration') {
      json({
        issuer: hostile.issuer,
        authorization_endpoint: `${hostile.issuer}/authorize`,
        token_endpoint: `${hostile.issuer}/token`,
        jwks_uri: `${hostile.issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
      });
    } else if (req.url === '/jwks') json({ keys: [jwk] });
    else if (req.url === '/token') {
      req.resume();
      req.on('end', () => {
        void hostile.idToken!().then((idToken) =>
          json({ access_token: 'at', token_type: 'Bearer', expires_in: 60, id_token: idToken }),
        );
      });
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hostile.issuer = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  hostile.caPem = ca.cert;
  hostile.close = () => new Promise((resolve) => server.close(() => resolve()));
  return hostile as Hostile;
}

describe('an OIDC provider whose ID tokens are wrong', () => {
  let hostile: Hostile;
  beforeAll(async () => {
    hostile = await startHostile();
  });
  afterAll(async () => {
    await hostile?.close();
  });

  const now = () => Math.floor(Date.now() / 1000);
  function token(claims: Record<string, unknown>, key = hostile.key, kid = 'k1') {
    return new SignJWT({ sub: 'mallory', ...claims }).setProtectedHeader({ alg: 'RS256', kid }).sign(key);
  }
  const good = (nonce: string) => ({
    iss: hostile.issuer,
    aud: 'kapi',
    iat: now(),
    exp: now() + 60,
    nonce,
  });

  async function answerWith(idToken: (nonce: string) => Promise<string>) {
    const provider = new OidcProvider(
      settings({ issuer: hostile.issuer, caPem: hostile.caPem, clientID: 'kapi', clientSecret: 's' }, hostile.issuer),
      capturingLogger().logger,
    );
    const expected = bound();
    hostile.idToken = () => idToken(expected.nonce);
    const answer = new URLSearchParams({ code: 'c', state: expected.state });
    try {
      return await provider.handleCallback(answer, expected);
    } finally {
      await provider.close();
    }
  }

  test('when the ID token is right, then it is accepted (so each refusal below is for its one fault)', async () => {
    await expect(answerWith((nonce) => token(good(nonce)))).resolves.toMatchObject({ userId: 'mallory' });
  });

  test.each([
    ['another nonce', (nonce: string) => token({ ...good(nonce), nonce: 'not-yours' })],
    ['no nonce', (nonce: string) => token({ ...good(nonce), nonce: undefined })],
    ['another audience', (nonce: string) => token({ ...good(nonce), aud: 'someone-else' })],
    ['several audiences and no azp', (nonce: string) => token({ ...good(nonce), aud: ['kapi', 'other'] })],
    ['an azp of another client', (nonce: string) => token({ ...good(nonce), aud: ['kapi', 'other'], azp: 'other' })],
    ['another issuer', (nonce: string) => token({ ...good(nonce), iss: 'https://evil.example' })],
    ['an expiry in the past', (nonce: string) => token({ ...good(nonce), exp: now() - 3600, iat: now() - 7200 })],
    ['an issue time in the future', (nonce: string) => token({ ...good(nonce), iat: now() + 3600, exp: now() + 3660 })],
    ['a lifetime of a year', (nonce: string) => token({ ...good(nonce), exp: now() + 365 * 86400 })],
    ['a signature by a key the provider does not publish', (nonce: string) => token(good(nonce), hostile.otherKey)],
    ['a forged signature', async (nonce: string) => `${(await token(good(nonce))).slice(0, -6)}AAAAAA`],
    [
      'alg none',
      async (nonce: string) =>
        `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify(good(nonce))).toString('base64url')}.`,
    ],
  ])('when the ID token has %s, then the answer is refused', async (_case, idToken) => {
    await expect(answerWith(idToken)).rejects.toBeInstanceOf(UpstreamLoginRefused);
  });
});
