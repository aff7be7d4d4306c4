/**
 * Identity end to end (SPEC §2 and §3): real HTTP to real kapi replicas, on the sandbox or on the cluster named by
 * KUBECONFIG, arranging Users, Secrets and the ClusterConfiguration through the Kubernetes API only.
 *
 * Four replicas share the run's cluster objects. A (the harness's) and B serve the ordinary and cross-replica cases.
 * Failed logins also count per client address inside the replica that saw them, and every request here comes from
 * 127.0.0.1, so the error table's failures go to replica E and the lockout's to replica C: no case can lock another
 * out. Every case that changes the ClusterConfiguration puts it back (and waits until it is served) when it ends.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { ROTATION_GRACE_SECONDS } from '../../src/auth/sessions/session-record.js';
import { CLOCK_TOLERANCE_SECONDS } from '../../src/auth/tokens/tokens.js';
import type { TokenPair } from './client.js';
import { startE2E, waitFor, type E2E, patchUserStatus } from './harness.js';
import { ConfigurationUnderTest } from './identity-config.js';
import {
  DEFAULT_CLIENT,
  KapiCaller,
  basicAuthorization,
  type Answer,
  type OAuthErrorBody,
  type StatusBody,
} from './identity-http.js';
import {
  claimsOf,
  freshClaims,
  keyEncodings,
  readSigningKey,
  rs256LabelledHmac,
  signHs,
  signWithOwnRsaKey,
  unsigned,
  withPayload,
  type Claims,
} from './identity-tokens.js';

const NODES = '/kapis/resources.kapi.io/v1alpha3/nodes';
const NAMESPACES = '/api/v1/namespaces';
const USERS = '/apis/iam.kapi.io/v1beta1/users';
const READ_NODES = [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }];
const READER_PASSWORD = 'e2e-Reader-Passw0rd-identity';
const PROBE_PASSWORD = 'e2e-Probe-Passw0rd-identity';
const USER_PASSWORD = 'e2e-User-Passw0rd-identity';
const WRONG_PASSWORD = 'e2e-Wrong-Passw0rd-guess';

let e2e: E2E;
const caller = new KapiCaller();
let config: ConfigurationUnderTest;
/** Replica base URLs (see the file comment). */
let A: string;
let B: string;
let C: string;
let E: string;
/** A user allowed to list nodes, for cases that need a 200 to compare with. */
let reader: string;

const urlOf = (server: { httpPort: number }) => `http://127.0.0.1:${server.httpPort}`;

/** A run-scoped user allowed to list nodes. */
async function nodeReader(suffix: string, password = USER_PASSWORD): Promise<string> {
  const name = await e2e.createUser(suffix, password);
  await e2e.grant(name, READ_NODES);
  return name;
}

function passwordForm(username: string, password: string, client = DEFAULT_CLIENT): Record<string, string> {
  return { grant_type: 'password', username, password, client_id: client.id, client_secret: client.secret };
}

/** The RFC 6749 error answer every /oauth failure must be. */
function expectOAuthError(answer: Answer<OAuthErrorBody>, status: number, error: string): void {
  expect({ status: answer.status, error: answer.body.error }).toEqual({ status, error });
  expect(Object.keys(answer.body).sort()).toEqual(['error', 'error_description']);
  expect(answer.body.error_description.length).toBeGreaterThan(0);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(answer.headers.get('cache-control')).toBe('no-store');
  expect(answer.headers.get('pragma')).toBe('no-cache');
}

function expectStatus(answer: Answer<StatusBody>, code: number, reason: string): void {
  expect(answer.status).toBe(code);
  expect(answer.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason });
}

/** `expiresIn` 'any': a case running while a changed configuration (with its own lifetime marker) is served. */
function expectTokenPair(answer: Answer<TokenPair>, expiresIn: number | 'any' = 7200): void {
  expect(answer.status).toBe(200);
  expect(answer.headers.get('cache-control')).toBe('no-store');
  expect(answer.headers.get('pragma')).toBe('no-cache');
  expect(Object.keys(answer.body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
  expect(answer.body.token_type).toBe('Bearer');
  if (expiresIn === 'any') expect(answer.body.expires_in).toBeGreaterThan(0);
  else expect(answer.body.expires_in).toBe(expiresIn);
  expect(answer.body.access_token.split('.')).toHaveLength(3);
  expect(answer.body.refresh_token.split('.')).toHaveLength(3);
  caller.rememberTokens(answer.body);
}

beforeAll(async () => {
  e2e = await startE2E();
  A = e2e.kapiUrl;
  // one at a time: the harness names each replica's CA file by how many replicas it has started
  B = urlOf(await e2e.startReplica());
  C = urlOf(await e2e.startReplica());
  E = urlOf(await e2e.startReplica());
  caller.remember('password', READER_PASSWORD, PROBE_PASSWORD, USER_PASSWORD, WRONG_PASSWORD);
  caller.remember(
    'signing key',
    ...keyEncodings(await readSigningKey(e2e.admin, { namespace: e2e.runId, name: 'kapi-jwt' })),
  );
  reader = await nodeReader('reader', READER_PASSWORD);
  const probe = await e2e.createUser('probe', PROBE_PASSWORD);
  config = new ConfigurationUnderTest(e2e.admin, e2e.configuration, caller, {
    username: probe,
    password: PROBE_PASSWORD,
  });
  await config.load();
}, 60_000);

afterAll(async () => {
  await e2e?.stop();
});

describe('when a user gets a token with the password grant (seed §4.1)', () => {
  it('then client credentials in the body give a Bearer pair of 7200 s that lists nodes', async () => {
    const answer = await caller.token<TokenPair>(A, passwordForm(reader, READER_PASSWORD));
    expectTokenPair(answer);
    const nodes = await caller.get<{ items: unknown[]; totalItems: number }>(`${A}${NODES}`, answer.body.access_token);
    expect(nodes.status).toBe(200);
    expect(nodes.body.totalItems).toBe(nodes.body.items.length);
  });

  it('then HTTP Basic client authentication and a charset on the form type work too', async () => {
    const answer = await caller.token<TokenPair>(
      A,
      { grant_type: 'password', username: reader, password: READER_PASSWORD },
      { basic: DEFAULT_CLIENT, contentType: 'application/x-www-form-urlencoded; charset=UTF-8' },
    );
    expectTokenPair(answer);
    expect((await caller.get(`${A}${NODES}`, answer.body.access_token)).status).toBe(200);
  });

  it('then the e-mail address works as the username', async () => {
    const answer = await caller.token<TokenPair>(A, passwordForm(`${reader}@e2e.kapi.test`, READER_PASSWORD));
    expectTokenPair(answer);
    expect(claimsOf(answer.body.access_token).username).toBe(reader);
  });

  it('then the tokens carry the claims SPEC §2 names, and the two types are marked', async () => {
    const pair = await caller.login(A, reader, READER_PASSWORD);
    const access = claimsOf(pair.access_token);
    const refresh = claimsOf(pair.refresh_token);
    for (const claims of [access, refresh]) {
      expect(claims).toMatchObject({ sub: reader, username: reader, client_id: 'kapi' });
      for (const name of ['iss', 'aud', 'iat', 'exp', 'jti', 'sid']) expect(claims[name]).toBeDefined();
    }
    expect(access.token_type).toBe('access_token');
    expect(refresh.token_type).toBe('refresh_token');
    expect(access.sid).toBe(refresh.sid);
    expect((access.exp as number) - (access.iat as number)).toBe(7200);
  });
});

describe('when the token request is wrong (SPEC §2 error table)', () => {
  const PASSWORD_ONLY = { id: 'e2e-password-only', secret: 'e2e-password-only-secret-1' };
  let disabled: string;
  let pair: TokenPair;

  beforeAll(async () => {
    caller.remember('client secret', PASSWORD_ONLY.secret);
    await config.apply(
      {
        oauth: {
          clients: [
            { name: 'kapi', secret: 'kapi', grantTypes: ['password', 'refresh_token'] },
            { name: PASSWORD_ONLY.id, secret: PASSWORD_ONLY.secret, grantTypes: ['password'] },
          ],
        },
      },
      [E],
    );
    pair = await caller.login(E, reader, READER_PASSWORD);
    disabled = await e2e.createUser('disabled', USER_PASSWORD);
    const token = (await caller.login(E, disabled, USER_PASSWORD)).access_token;
    await patchUserStatus(e2e.admin, disabled, { state: 'Disabled', reason: 'disabled by the e2e suite' });
    // the replica knows once the user's token stops working (a GET, so no failed login is counted)
    await waitFor(async () => (await caller.get(`${E}${NAMESPACES}`, token)).status === 401);
  });

  afterAll(async () => {
    await config.restore([A, B, E]);
  });

  const withClient = (form: Record<string, string>) => ({ ...form, client_id: 'kapi', client_secret: 'kapi' });
  const rows: {
    when: string;
    send: () => Promise<Answer<OAuthErrorBody>>;
    status: number;
    error: string;
    basicChallenge?: boolean;
  }[] = [
    {
      when: 'grant_type is missing',
      send: () => caller.token(E, withClient({ username: reader, password: READER_PASSWORD })),
      status: 400,
      error: 'invalid_request',
    },
    {
      when: 'username is missing',
      send: () => caller.token(E, withClient({ grant_type: 'password', password: READER_PASSWORD })),
      status: 400,
      error: 'invalid_request',
    },
    {
      when: 'password is missing',
      send: () => caller.token(E, withClient({ grant_type: 'password', username: reader })),
      status: 400,
      error: 'invalid_request',
    },
    {
      when: 'a parameter is repeated',
      send: () =>
        caller.token(
          E,
          `grant_type=password&username=${reader}&username=${reader}&password=${READER_PASSWORD}&client_id=kapi&client_secret=kapi`,
        ),
      status: 400,
      error: 'invalid_request',
    },
    {
      when: 'the body is not valid form encoding',
      send: () => caller.token(E, `grant_type=password&username=%zz&password=x&client_id=kapi&client_secret=kapi`),
      status: 400,
      error: 'invalid_request',
    },
    {
      when: 'HTTP Basic and a body client_secret are both sent',
      send: () => caller.token(E, passwordForm(reader, READER_PASSWORD), { basic: DEFAULT_CLIENT }),
      status: 400,
      error: 'invalid_request',
    },
    {
      when: 'the Basic header is not base64',
      send: () =>
        caller.token(
          E,
          { grant_type: 'password', username: reader, password: READER_PASSWORD },
          { headers: { Authorization: 'Basic ***not-base64***' } },
        ),
      status: 400,
      error: 'invalid_request',
    },
    {
      when: 'no client credentials are sent',
      send: () => caller.token(E, { grant_type: 'password', username: reader, password: READER_PASSWORD }),
      status: 401,
      error: 'invalid_client',
    },
    {
      when: 'the client is unknown (body)',
      send: () => caller.token(E, passwordForm(reader, READER_PASSWORD, { id: 'e2e-nobody', secret: 'kapi' })),
      status: 401,
      error: 'invalid_client',
    },
    {
      when: 'the client secret is wrong (body)',
      send: () => caller.token(E, passwordForm(reader, READER_PASSWORD, { id: 'kapi', secret: 'e2e-wrong-secret' })),
      status: 401,
      error: 'invalid_client',
    },
    {
      when: 'the client is unknown (HTTP Basic)',
      send: () =>
        caller.token(
          E,
          { grant_type: 'password', username: reader, password: READER_PASSWORD },
          { basic: { id: 'e2e-nobody', secret: 'kapi' } },
        ),
      status: 401,
      error: 'invalid_client',
      basicChallenge: true,
    },
    {
      when: 'the client secret is wrong (HTTP Basic)',
      send: () =>
        caller.token(
          E,
          { grant_type: 'password', username: reader, password: READER_PASSWORD },
          { basic: { id: 'kapi', secret: 'e2e-wrong-secret' } },
        ),
      status: 401,
      error: 'invalid_client',
      basicChallenge: true,
    },
    {
      when: 'the client may not use the refresh_token grant',
      send: () =>
        caller.token(E, {
          grant_type: 'refresh_token',
          refresh_token: pair.refresh_token,
          client_id: PASSWORD_ONLY.id,
          client_secret: PASSWORD_ONLY.secret,
        }),
      status: 400,
      error: 'unauthorized_client',
    },
    {
      when: 'the grant type is unknown',
      send: () => caller.token(E, withClient({ grant_type: 'client_credentials' })),
      status: 400,
      error: 'unsupported_grant_type',
    },
    {
      when: 'the refresh token is not a token',
      send: () => caller.token(E, withClient({ grant_type: 'refresh_token', refresh_token: 'e2e-not-a-token' })),
      status: 400,
      error: 'invalid_grant',
    },
    {
      when: 'the refresh token is an access token',
      send: () => caller.token(E, withClient({ grant_type: 'refresh_token', refresh_token: pair.access_token })),
      status: 400,
      error: 'invalid_grant',
    },
  ];

  it.each(rows)('when $when, then $status $error', async (row) => {
    const answer = await row.send();
    expectOAuthError(answer, row.status, row.error);
    if (row.basicChallenge) expect(answer.headers.get('www-authenticate')).toMatch(/^Basic /);
    else expect(answer.headers.get('www-authenticate')).toBeNull();
  });

  it('then a wrong password, an unknown user or e-mail and a disabled user are one invalid_grant with one description', async () => {
    // not the reader: its failures would stay in its User status for the other cases
    const guessed = await e2e.createUser('guessed', USER_PASSWORD);
    const attempts = [
      passwordForm(guessed, WRONG_PASSWORD),
      passwordForm(`${guessed}@e2e.kapi.test`, WRONG_PASSWORD),
      passwordForm(e2e.name('nobody'), WRONG_PASSWORD),
      passwordForm(`${e2e.name('nobody')}@e2e.kapi.test`, WRONG_PASSWORD),
      passwordForm(disabled, USER_PASSWORD),
    ];
    const descriptions = new Set<string>();
    for (const form of attempts) {
      const answer = await caller.token(E, form);
      expectOAuthError(answer, 400, 'invalid_grant');
      descriptions.add(answer.body.error_description);
    }
    expect(descriptions.size).toBe(1);
    expect([...descriptions][0]).not.toMatch(/unknown|exist|disabled|not found/i);
  });

  it('then a body that is not a form is 415', async () => {
    const json = await caller.token(E, JSON.stringify(passwordForm(reader, READER_PASSWORD)), {
      contentType: 'application/json',
    });
    expectOAuthError(json, 415, 'invalid_request');
    const none = await caller.token(E, new URLSearchParams(passwordForm(reader, READER_PASSWORD)).toString(), {
      contentType: null,
    });
    expect(none.status).toBe(415);
  });

  it('then a body over 16 KiB is 413', async () => {
    const answer = await caller.token(E, { ...passwordForm(reader, READER_PASSWORD), padding: 'x'.repeat(17 * 1024) });
    expectOAuthError(answer, 413, 'invalid_request');
  });

  it('then parameters in the query string are never read', async () => {
    const query = new URLSearchParams(passwordForm(reader, READER_PASSWORD)).toString();
    const onlyInQuery = await caller.token(E, '', { query });
    expectOAuthError(onlyInQuery, 401, 'invalid_client');
    const userInQuery = await caller.token(E, withClient({ grant_type: 'password' }), { query });
    expectOAuthError(userInQuery, 400, 'invalid_request');
    // a wrong password in the query does not override the body's right one
    const conflicting = new URLSearchParams({ password: WRONG_PASSWORD, username: e2e.name('nobody') }).toString();
    const bodyWins = await caller.token<TokenPair>(E, passwordForm(reader, READER_PASSWORD), { query: conflicting });
    expectTokenPair(bodyWins, 'any');
  });

  it('then GET /oauth/token is 405 with Allow: POST, still as RFC 6749 JSON', async () => {
    const answer = await caller.oauth(E, '/oauth/token', { method: 'GET', contentType: null });
    expectOAuthError(answer, 405, 'invalid_request');
    expect(answer.headers.get('allow')).toBe('POST');
  });
});

describe('when a request carries no valid access token', () => {
  let key: Buffer;
  let genuine: string;
  let refresh: string;
  let claims: Claims;

  beforeAll(async () => {
    key = await readSigningKey(e2e.admin, { namespace: e2e.runId, name: 'kapi-jwt' });
    const pair = await caller.login(A, reader, READER_PASSWORD);
    genuine = pair.access_token;
    refresh = pair.refresh_token;
    claims = claimsOf(genuine);
  });

  const now = () => Math.floor(Date.now() / 1000);
  const bearer = (token: () => string) => () => ({ Authorization: `Bearer ${token()}` });
  const cases: [string, () => Record<string, string>][] = [
    ['no Authorization header', () => ({})],
    ['a Basic Authorization header', () => ({ Authorization: basicAuthorization(DEFAULT_CLIENT) })],
    ['a token that is not a JWT', bearer(() => 'e2e-garbage-token')],
    ['alg "none" with no signature', bearer(() => unsigned(freshClaims(claims)))],
    ['HS256 signed with another key', bearer(() => signHs(freshClaims(claims), Buffer.alloc(48, 7)))],
    ["RS256 signed with the caller's own RSA key", bearer(() => signWithOwnRsaKey(freshClaims(claims)))],
    ['an RS256 header over an HMAC made with the real key', bearer(() => rs256LabelledHmac(freshClaims(claims), key))],
    ['HS512 with the real key (not on the allow-list)', bearer(() => signHs(freshClaims(claims), key, 'HS512'))],
    [
      'a tampered payload (another user, the original signature)',
      bearer(() => withPayload(genuine, { ...claims, sub: 'admin', username: 'admin' })),
    ],
    [
      'a tampered payload (a later expiry, the original signature)',
      bearer(() => withPayload(genuine, { ...claims, exp: (claims.exp as number) + 86_400 })),
    ],
    [
      'a validly signed token expired beyond the clock skew',
      bearer(() => signHs(freshClaims(claims, { iat: now() - 600, exp: now() - CLOCK_TOLERANCE_SECONDS - 50 }), key)),
    ],
    ['a validly signed token without exp', bearer(() => signHs(freshClaims(claims, { exp: undefined }), key))],
    ['a validly signed token for another audience', bearer(() => signHs(freshClaims(claims, { aud: 'other' }), key))],
    ['a validly signed token from another issuer', bearer(() => signHs(freshClaims(claims, { iss: 'other' }), key))],
    ['the refresh token', bearer(() => refresh)],
  ];

  it('then, as the control, the genuine token and a token forged with the real key and fresh claims both list nodes', async () => {
    expect((await caller.get(`${A}${NODES}`, genuine)).status).toBe(200);
    const forged = signHs(freshClaims(claims), key);
    expect((await caller.get(`${A}${NODES}`, forged)).status).toBe(200);
    expect((await caller.get(`${A}${NAMESPACES}`, forged)).status).not.toBe(401);
  });

  it.each(cases)('when it is %s, then /kapis and /api answer 401 Status', async (_name, headers) => {
    for (const path of [NODES, NAMESPACES]) {
      const answer = await caller.get(`${A}${path}`, headers());
      expectStatus(answer, 401, 'Unauthorized');
    }
  });
});

describe('when a refresh token is used', () => {
  it('then an access token in its place is invalid_grant', async () => {
    const pair = await caller.login(A, reader, READER_PASSWORD);
    expectOAuthError(await caller.refresh(A, pair.access_token), 400, 'invalid_grant');
  });

  it('then it rotates; the replaced one gets the current pair within the grace, and after it revokes the session', async () => {
    const first = await caller.login(A, reader, READER_PASSWORD);
    const rotated = await caller.refresh(A, first.refresh_token);
    expectTokenPair(rotated);
    expect(rotated.body.refresh_token).not.toBe(first.refresh_token);
    expect(rotated.body.access_token).not.toBe(first.access_token);
    expect((await caller.get(`${A}${NODES}`, rotated.body.access_token)).status).toBe(200);

    // a concurrent refresh that lost the race (within the grace) gets the same current refresh token
    const replayed = await caller.refresh(A, first.refresh_token);
    expect(replayed.status).toBe(200);
    expect(replayed.body.refresh_token).toBe(rotated.body.refresh_token);

    // past the grace (counted in whole seconds from the rotation, the refresh token's iat), it is a replay attack
    const rotatedAt = claimsOf(rotated.body.refresh_token).iat as number;
    const graceOver = (rotatedAt + ROTATION_GRACE_SECONDS + 1) * 1000 + 100;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, graceOver - Date.now())));
    expectOAuthError(await caller.refresh(A, first.refresh_token), 400, 'invalid_grant');
    expectStatus(await caller.get(`${A}${NODES}`, rotated.body.access_token), 401, 'Unauthorized');
    expectOAuthError(await caller.refresh(A, rotated.body.refresh_token), 400, 'invalid_grant');
  }, 20_000);
});

describe('when a user logs out', () => {
  it.each(['GET', 'POST'])('then %s /oauth/logout ends the session: its tokens are refused next', async (method) => {
    const pair = await caller.login(A, reader, READER_PASSWORD);
    expect((await caller.get(`${A}${NODES}`, pair.access_token)).status).toBe(200);
    const answer = await caller.oauth(A, '/oauth/logout', {
      method,
      contentType: null,
      headers: { Authorization: `Bearer ${pair.access_token}` },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expectStatus(await caller.get(`${A}${NODES}`, pair.access_token), 401, 'Unauthorized');
    expectOAuthError(await caller.refresh(A, pair.refresh_token), 400, 'invalid_grant');
  });

  it('then POST /oauth/revoke with the refresh token ends the session (RFC 7009)', async () => {
    const pair = await caller.login(A, reader, READER_PASSWORD);
    const answer = await caller.oauth(A, '/oauth/revoke', {
      form: { token: pair.refresh_token, client_id: 'kapi', client_secret: 'kapi' },
    });
    expect(answer.status).toBe(200);
    expectStatus(await caller.get(`${A}${NODES}`, pair.access_token), 401, 'Unauthorized');
  });

  it('then revoking a token that is not one is still 200, and logout without a valid access token is 401', async () => {
    const revoke = await caller.oauth(A, '/oauth/revoke', {
      form: { token: 'e2e-not-a-token', client_id: 'kapi', client_secret: 'kapi' },
    });
    expect(revoke.status).toBe(200);
    const pair = await caller.login(A, reader, READER_PASSWORD);
    const withoutAccessToken: Record<string, string>[] = [{}, { Authorization: `Bearer ${pair.refresh_token}` }];
    for (const headers of withoutAccessToken) {
      const logout = await caller.oauth(A, '/oauth/logout', { contentType: null, headers });
      expectOAuthError(logout, 401, 'invalid_token');
      expect(logout.headers.get('www-authenticate')).toMatch(/^Bearer /);
    }
    expect((await caller.get(`${A}${NODES}`, pair.access_token)).status).toBe(200);
  });
});

describe('when two replicas serve one cluster', () => {
  it('then a token from either works on the other, and a refresh on B rotates a pair from A', async () => {
    const fromA = await caller.login(A, reader, READER_PASSWORD);
    expect((await caller.get(`${B}${NODES}`, fromA.access_token)).status).toBe(200);
    const fromB = await caller.login(B, reader, READER_PASSWORD);
    expect((await caller.get(`${A}${NODES}`, fromB.access_token)).status).toBe(200);
    const rotated = await caller.refresh(B, fromA.refresh_token);
    expectTokenPair(rotated);
    expect((await caller.get(`${A}${NODES}`, rotated.body.access_token)).status).toBe(200);
  });

  it('then a logout on A is refused on B too', async () => {
    const pair = await caller.login(A, reader, READER_PASSWORD);
    expect((await caller.get(`${B}${NODES}`, pair.access_token)).status).toBe(200);
    const logout = await caller.oauth(A, '/oauth/logout', {
      contentType: null,
      headers: { Authorization: `Bearer ${pair.access_token}` },
    });
    expect(logout.status).toBe(200);
    await waitFor(async () => (await caller.get(`${B}${NODES}`, pair.access_token)).status === 401);
    expectStatus(await caller.get(`${B}${NODES}`, pair.access_token), 401, 'Unauthorized');
    expectOAuthError(await caller.refresh(B, pair.refresh_token), 400, 'invalid_grant');
  });
});

describe('when a user fails to log in too often', () => {
  const MAX_FAILURES = 3;
  let victim: string;
  let bystander: string;

  beforeAll(async () => {
    victim = await e2e.createUser('lockout', USER_PASSWORD);
    bystander = await e2e.createUser('bystander', USER_PASSWORD);
    await config.apply({ loginLimit: { maxFailures: MAX_FAILURES, window: '10m' } }, [C, B]);
  });

  afterAll(async () => {
    // not C: its address window holds the failures, so its probe login would be refused
    await config.restore([A, B, E]);
  });

  it(`then ${MAX_FAILURES} failures on C lock the user on B too (429 + Retry-After), the right password included`, async () => {
    for (let attempt = 1; attempt <= MAX_FAILURES; attempt++) {
      expectOAuthError(await caller.token(C, passwordForm(victim, WRONG_PASSWORD)), 400, 'invalid_grant');
    }
    const onC = await caller.token(C, passwordForm(victim, USER_PASSWORD));
    expectOAuthError(onC, 429, 'invalid_grant');

    const status = (await e2e.admin.request<{ status?: Record<string, unknown> }>({ path: `${USERS}/${victim}` }))
      .status;
    expect(status?.state).toBe('AuthLimitExceeded');
    expect(Date.parse(status?.lockedUntil as string)).toBeGreaterThan(Date.now());

    // B has never seen a failure from this address: its 429 can only come from the lock in the User's status
    await waitFor(async () => (await caller.token(B, passwordForm(victim, WRONG_PASSWORD))).status === 429);
    const onB = await caller.token(B, passwordForm(victim, USER_PASSWORD));
    expectOAuthError(onB, 429, 'invalid_grant');
    const retryAfter = Number(onB.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(600);

    // the lock is the user's, not the address's: another user still logs in on B
    expectTokenPair(await caller.token<TokenPair>(B, passwordForm(bystander, USER_PASSWORD)), 'any');
  });
});

describe('when a user is disabled or deleted', () => {
  it('then a disabled user is refused from then on and cannot refresh', async () => {
    const user = await nodeReader('to-disable');
    const pair = await caller.login(A, user, USER_PASSWORD);
    expect((await caller.get(`${A}${NODES}`, pair.access_token)).status).toBe(200);
    await patchUserStatus(e2e.admin, user, { state: 'Disabled', reason: 'disabled by the e2e suite' });
    await waitFor(async () => (await caller.get(`${A}${NODES}`, pair.access_token)).status === 401);
    expectOAuthError(await caller.refresh(A, pair.refresh_token), 400, 'invalid_grant');
  });

  it('then a deleted user is refused from then on, on both replicas', async () => {
    const user = await nodeReader('to-delete');
    const pair = await caller.login(A, user, USER_PASSWORD);
    expect((await caller.get(`${B}${NODES}`, pair.access_token)).status).toBe(200);
    await e2e.admin.request({ method: 'DELETE', path: `${USERS}/${user}` });
    await waitFor(async () => {
      const [onA, onB] = await Promise.all([
        caller.get(`${A}${NODES}`, pair.access_token),
        caller.get(`${B}${NODES}`, pair.access_token),
      ]);
      return onA.status === 401 && onB.status === 401;
    });
    expectOAuthError(await caller.refresh(A, pair.refresh_token), 400, 'invalid_grant');
  });
});

describe('when the ClusterConfiguration changes (SPEC §3)', () => {
  const NEW_SECRET = 'e2e-rotated-client-secret-1';
  const REF_SECRET_1 = 'e2e-secret-from-secretref-1';
  const REF_SECRET_2 = 'e2e-secret-from-secretref-2';

  afterEach(async () => {
    await config.restore([A, B, E]);
  });

  /** Whether a replica accepts client credentials: with them, a password grant lacking a username is 400, not 401. */
  async function clientAccepted(url: string, client: { id: string; secret: string }): Promise<boolean> {
    const answer = await caller.token(url, {
      grant_type: 'password',
      client_id: client.id,
      client_secret: client.secret,
    });
    if (answer.status !== 400 && answer.status !== 401) throw new Error(`unexpected ${answer.status}`);
    return answer.status === 400;
  }

  it('then a new client secret is accepted and the old one refused, on every replica', async () => {
    caller.remember('client secret', NEW_SECRET);
    const rotated = { id: 'kapi', secret: NEW_SECRET };
    await config.patchAuthentication({
      oauth: { clients: [{ name: 'kapi', secret: NEW_SECRET, grantTypes: ['password', 'refresh_token'] }] },
    });
    await waitFor(async () => {
      const results = await Promise.all(
        [A, B].flatMap((url) => [clientAccepted(url, rotated), clientAccepted(url, DEFAULT_CLIENT)]),
      );
      return results.every((accepted, index) => accepted === (index % 2 === 0));
    });

    const answer = await caller.token<TokenPair>(A, passwordForm(reader, READER_PASSWORD, rotated));
    expectTokenPair(answer);
    expect((await caller.get(`${B}${NODES}`, answer.body.access_token)).status).toBe(200);
    expectOAuthError(await caller.token(A, passwordForm(reader, READER_PASSWORD)), 401, 'invalid_client');
  });

  it('then a client secret read through secretRef follows its Secret', async () => {
    caller.remember('client secret', REF_SECRET_1, REF_SECRET_2);
    const secretPath = `/api/v1/namespaces/${e2e.configuration.namespace}/secrets`;
    await e2e.admin.request({
      method: 'POST',
      path: secretPath,
      body: {
        metadata: { name: 'e2e-client' },
        type: 'Opaque',
        data: { secret: Buffer.from(REF_SECRET_1).toString('base64') },
      },
    });
    await config.apply(
      {
        oauth: {
          clients: [{ name: 'kapi', secretRef: { name: 'e2e-client', key: 'secret' }, grantTypes: ['password'] }],
        },
      },
      [A, B],
      { id: 'kapi', secret: REF_SECRET_1 },
    );
    await e2e.admin.request({
      method: 'PATCH',
      path: `${secretPath}/e2e-client`,
      contentType: 'application/merge-patch+json',
      body: { data: { secret: Buffer.from(REF_SECRET_2).toString('base64') } },
    });
    await waitFor(async () => {
      const [newOnA, oldOnA, newOnB, oldOnB] = await Promise.all([
        clientAccepted(A, { id: 'kapi', secret: REF_SECRET_2 }),
        clientAccepted(A, { id: 'kapi', secret: REF_SECRET_1 }),
        clientAccepted(B, { id: 'kapi', secret: REF_SECRET_2 }),
        clientAccepted(B, { id: 'kapi', secret: REF_SECRET_1 }),
      ]);
      return newOnA && !oldOnA && newOnB && !oldOnB;
    });
  });

  it('then an invalid object keeps the last good configuration and says why in status.conditions', async () => {
    const invalidSecret = `${NEW_SECRET} `; // a trailing space: valid for the CRD schema, refused by kapi
    const patched = await config.patchAuthentication({
      oauth: { clients: [{ name: 'kapi', secret: invalidSecret, grantTypes: ['password', 'refresh_token'] }] },
    });
    const valid = await config.condition('Valid', 'False', patched.metadata.generation);
    expect(valid.reason).toBe('InvalidConfiguration');
    expect(valid.message).toContain('spec.authentication.oauth.clients[0].secret');
    expect(valid.message).not.toContain(NEW_SECRET);
    expect((await config.condition('Ready', 'False', patched.metadata.generation)).reason).toBe('InvalidConfiguration');

    for (const url of [A, B]) {
      expect(await clientAccepted(url, DEFAULT_CLIENT)).toBe(true);
      expect(await clientAccepted(url, { id: 'kapi', secret: invalidSecret })).toBe(false);
      expect(await clientAccepted(url, { id: 'kapi', secret: NEW_SECRET })).toBe(false);
    }
    expectTokenPair(await caller.token<TokenPair>(A, passwordForm(reader, READER_PASSWORD)));

    const restored = await config.restore([A, B]);
    await config.condition('Valid', 'True', restored.metadata.generation);
  });
});

describe('when multipleLogin is false', () => {
  beforeAll(async () => {
    await config.apply({ multipleLogin: false }, [A, B]);
  });

  afterAll(async () => {
    await config.restore([A, B, E]);
  });

  it('then a second login ends the first session, on both replicas, and the second one works', async () => {
    const user = await nodeReader('single-login');
    const first = await caller.login(A, user, USER_PASSWORD);
    expect((await caller.get(`${B}${NODES}`, first.access_token)).status).toBe(200);
    const second = await caller.login(A, user, USER_PASSWORD);
    expectStatus(await caller.get(`${A}${NODES}`, first.access_token), 401, 'Unauthorized');
    await waitFor(async () => (await caller.get(`${B}${NODES}`, first.access_token)).status === 401);
    expectOAuthError(await caller.refresh(A, first.refresh_token), 400, 'invalid_grant');
    expect((await caller.get(`${A}${NODES}`, second.access_token)).status).toBe(200);
    expect((await caller.get(`${B}${NODES}`, second.access_token)).status).toBe(200);
  });
});

describe('when an authenticated user lacks the RBAC right to list nodes', () => {
  it('then /kapis answers 403 Status, while a user granted list nodes gets 200', async () => {
    const outsider = await e2e.createUser('no-rights', USER_PASSWORD);
    const token = (await caller.login(A, outsider, USER_PASSWORD)).access_token;
    const denied = await caller.get(`${A}${NODES}`, token);
    expectStatus(denied, 403, 'Forbidden');
    const granted = (await caller.login(A, reader, READER_PASSWORD)).access_token;
    expect((await caller.get(`${A}${NODES}`, granted)).status).toBe(200);
  });
});

describe('when any of the answers above was an error', () => {
  it('then none carried a token, password, client secret or signing key (checked on arrival)', () => {
    // each error answer was inspected as it arrived; this shows the check ran on a meaningful number of them
    expect(caller.errorAnswersInspected).toBeGreaterThan(40);
  });
});
