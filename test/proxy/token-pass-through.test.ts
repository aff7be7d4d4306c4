/**
 * Token pass-through (SPEC §5): which tokens may stand for their caller at kube-apiserver, how kapi finds out whether
 * the cluster accepts them (and notices a change), and what kube-apiserver then receives.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { UserInfo } from '../../src/auth/identity.js';
import {
  isPassable,
  keepPassableToken,
  PASS_THROUGH_MIN_REMAINING_SECONDS,
  PROBE_USERNAME,
} from '../../src/auth/passable-token.js';
import { KubeApiError } from '../../src/kube/client.js';
import { createLogger } from '../../src/observability/logger.js';
import { reviewMismatch, TokenPassThrough, type TokenReviewAnswer } from '../../src/proxy/token-pass-through.js';
import {
  auth,
  Backend,
  headerValues,
  KAPI_TOKEN,
  send,
  startKapi,
  stopCheckingLogs,
  until,
  USER_TOKEN,
  type Kapi,
} from './harness.js';

const NOW = 1_900_000_000;
const AUTH = 'system:authenticated';
const claims = (over: Partial<{ iss: string; exp: number; groups: string[] }> = {}) => ({
  iss: 'https://kapi.example',
  exp: NOW + 3600,
  groups: ['dev'],
  ...over,
});

describe('which access tokens may be passed on', () => {
  const ISSUER = 'https://kapi.example';
  const RS = { algorithm: 'RS256', active: true };
  it.each<[string, ReturnType<typeof claims>, { algorithm: string; active: boolean }, string[], boolean]>([
    [
      'an RS256 token of the active key and the current issuer, naming the impersonated groups',
      claims(),
      RS,
      ['dev', AUTH],
      true,
    ],
    [
      'ES256, groups in another order',
      claims({ groups: ['b', 'a'] }),
      { algorithm: 'ES256', active: true },
      ['a', AUTH, 'b'],
      true,
    ],
    [
      'HS256: kube-apiserver cannot verify it (the key is never published)',
      claims(),
      { algorithm: 'HS256', active: true },
      ['dev', AUTH],
      false,
    ],
    [
      'signed by a key no longer active (the verdict is about the active key’s tokens)',
      claims(),
      { algorithm: 'RS256', active: false },
      ['dev', AUTH],
      false,
    ],
    ['an earlier issuer kapi still accepts', claims({ iss: 'https://old.kapi.example' }), RS, ['dev', AUTH], false],
    ['the issuer `kapi` (no issuer URL configured)', claims({ iss: 'kapi' }), RS, ['dev', AUTH], false],
    ['groups changed since it was issued (kapi reads the User each time)', claims(), RS, ['dev', 'ops', AUTH], false],
    ['a group taken away since', claims({ groups: ['dev', 'ops'] }), RS, ['dev', AUTH], false],
    ['about to expire', claims({ exp: NOW + PASS_THROUGH_MIN_REMAINING_SECONDS - 1 }), RS, ['dev', AUTH], false],
  ])('when %s, then it is judged as expected', (_what, given, signedWith, impersonated, expected) => {
    expect(isPassable(given, signedWith, ISSUER, impersonated, AUTH, NOW)).toBe(expected);
  });
});

describe('whether kube-apiserver sees the holder of a token as kapi would impersonate them', () => {
  const alice = { username: 'alice', groups: ['dev', AUTH] };
  it.each<[string, TokenReviewAnswer, boolean]>([
    [
      'the same user and groups (system:authenticated added by kube-apiserver)',
      { authenticated: true, username: 'alice', groups: ['dev', AUTH] },
      true,
    ],
    [
      'the same, groups without system:authenticated',
      { authenticated: true, username: 'alice', groups: ['dev'] },
      true,
    ],
    ['not authenticated (no --oidc-* flags naming kapi)', { authenticated: false }, false],
    [
      'a username prefix (--oidc-username-prefix unset)',
      { authenticated: true, username: 'https://kapi#alice', groups: ['dev', AUTH] },
      false,
    ],
    ['no groups claim', { authenticated: true, username: 'alice', groups: [AUTH] }, false],
    ['a groups prefix', { authenticated: true, username: 'alice', groups: ['oidc:dev', AUTH] }, false],
  ])('when the review answers %s, then it is judged as expected', (_what, answer, accepted) => {
    expect(reviewMismatch(alice, answer) === undefined).toBe(accepted);
  });
});

/** A review the test answers when it wants: the order of events, not their timing, is what is checked. */
function controlledReviews() {
  const asked: { token: string; answer: (a: TokenReviewAnswer) => void; fail: (e: Error) => void }[] = [];
  const review = (token: string) =>
    new Promise<TokenReviewAnswer>((answer, fail) => asked.push({ token, answer, fail }));
  return { asked, review };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));
const PROBE = { token: 'probe-token', kid: 'rs', username: PROBE_USERNAME, groups: [PROBE_USERNAME] };
const PROBE_SEEN: TokenReviewAnswer = { authenticated: true, username: PROBE_USERNAME, groups: [PROBE_USERNAME, AUTH] };

describe('finding out whether the cluster accepts kapi’s tokens', () => {
  const lines: string[] = [];
  const logger = createLogger('info', { sink: (line) => lines.push(line) });
  const alice = (kid = 'rs'): UserInfo => {
    const user: UserInfo = { username: 'alice', groups: ['dev', AUTH] };
    keepPassableToken(user, { token: 'alice-token', expiresAt: NOW + 3600, kid });
    return user;
  };
  const started = (clock: () => number, review: (token: string) => Promise<TokenReviewAnswer>) =>
    new TokenPassThrough({ review, probe: () => PROBE, logger, clock, recheckMs: 60_000, retryMs: 5_000 });

  it('when nothing is known yet, then kapi impersonates, reviews its own probe once, and passes tokens only after kube-apiserver said yes', async () => {
    lines.length = 0;
    let now = 0;
    const { asked, review } = controlledReviews();
    const passThrough = started(() => now, review);
    expect(passThrough.tokenFor(alice())).toBeUndefined();
    expect(passThrough.tokenFor(alice())).toBeUndefined(); // one review in flight, not two
    expect(asked.map((a) => a.token)).toEqual(['probe-token']); // never a caller's token
    asked[0]!.answer(PROBE_SEEN);
    await flush();
    expect(passThrough.current).toBe('accepted');
    expect(passThrough.tokenFor(alice())).toBe('alice-token');
    expect(passThrough.tokenFor(alice('older-key'))).toBeUndefined(); // the verdict is about the probe's key
    expect(asked).toHaveLength(1); // the verdict stands until it is due again

    // kube-apiserver stops accepting them (its flags changed): the 401 turns pass-through off at once
    passThrough.refusedByCluster();
    expect(passThrough.tokenFor(alice())).toBeUndefined();
    // once the verdict is due, a review asks again, and a yes turns it back on
    now += 60_000;
    expect(passThrough.tokenFor(alice())).toBeUndefined();
    expect(asked).toHaveLength(2);
    asked[1]!.answer(PROBE_SEEN);
    await flush();
    expect(passThrough.tokenFor(alice())).toBe('alice-token');
    const changes = lines.map((line) => JSON.parse(line).message);
    expect(changes).toEqual([
      'token pass-through on',
      'token pass-through off: impersonating',
      'token pass-through on',
    ]);
    expect(lines.join('\n')).not.toMatch(/alice-token|probe-token/);
  });

  /** Pass-through turned on by a first review, then a minute later the second review asked and not yet answered. */
  const onThenRecheckStarted = async () => {
    const clock = { now: 0 };
    const { asked, review } = controlledReviews();
    const passThrough = started(() => clock.now, review);
    passThrough.tokenFor(alice());
    asked[0]!.answer(PROBE_SEEN);
    await flush();
    clock.now += 60_000;
    passThrough.tokenFor(alice()); // a review starts
    return { asked, passThrough, clock };
  };

  it('when a 401 comes while a review is on its way, then the review’s yes does not undo it', async () => {
    const { asked, passThrough } = await onThenRecheckStarted();
    passThrough.refusedByCluster(); // then a passed token is refused
    asked[1]!.answer(PROBE_SEEN); // the older review's answer arrives last
    await flush();
    expect(passThrough.current).toBe('refused');
    expect(passThrough.tokenFor(alice())).toBeUndefined();
  });

  it('when kube-apiserver cannot be reached for a review, then the verdict stays and it is asked again soon', async () => {
    const { asked, passThrough, clock } = await onThenRecheckStarted();
    asked[1]!.fail(new Error('connect ECONNREFUSED'));
    await flush();
    expect(passThrough.tokenFor(alice())).toBe('alice-token'); // still on
    clock.now += 4_999;
    passThrough.tokenFor(alice());
    expect(asked).toHaveLength(2);
    clock.now += 1;
    passThrough.tokenFor(alice());
    expect(asked).toHaveLength(3); // the retry, before the minute is over
  });

  it('when kube-apiserver refuses the review itself or names someone else, then kapi keeps impersonating', async () => {
    const { asked, review } = controlledReviews();
    let now = 0;
    const passThrough = started(() => now, review);
    passThrough.tokenFor(alice());
    asked[0]!.fail(new KubeApiError(403, undefined, 'tokenreviews.authentication.k8s.io is forbidden'));
    await flush();
    expect(passThrough.current).toBe('refused');
    now += 60_000;
    passThrough.tokenFor(alice());
    asked[1]!.answer({
      authenticated: true,
      username: `https://kapi.example#${PROBE_USERNAME}`,
      groups: [PROBE_USERNAME],
    });
    await flush();
    expect(passThrough.tokenFor(alice())).toBeUndefined();
    expect(passThrough.current).toBe('refused');
  });

  it('when the caller’s token is not passable (HS256, no issuer URL), then no review is asked at all', () => {
    const { asked, review } = controlledReviews();
    const passThrough = started(() => 0, review);
    expect(passThrough.tokenFor({ username: 'bob', groups: [AUTH] })).toBeUndefined();
    expect(asked).toHaveLength(0);
  });

  it('when kapi’s own tokens could not be verified by kube-apiserver (no probe), then it impersonates without asking', () => {
    const { asked, review } = controlledReviews();
    const passThrough = new TokenPassThrough({ review, probe: () => undefined, logger, clock: () => 0 });
    expect(passThrough.tokenFor(alice())).toBeUndefined();
    expect(asked).toHaveLength(0);
    expect(passThrough.current).toBe('refused');
  });
});

describe('what kube-apiserver receives', () => {
  let backend: Backend;
  let kapi: Kapi;
  afterEach(() => stopCheckingLogs(kapi, backend));

  /** kube-apiserver no longer trusting kapi: a 401 to the caller's own token, kapi's credentials still good. */
  const refusingPassedTokens: Backend['onRequest'] = (req, res) => {
    if (req.headers.authorization === `Bearer ${USER_TOKEN}`) res.writeHead(401).end('{"kind":"Status","code":401}');
    else res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"kind":"NodeList","items":[]}');
  };

  async function accepted(reviewAnswer: TokenReviewAnswer = PROBE_SEEN) {
    backend = await Backend.start();
    const passThrough = new TokenPassThrough({
      review: async () => reviewAnswer,
      probe: () => PROBE,
      logger: createLogger('error', { silent: true }),
      clock: Date.now,
    });
    const user: UserInfo = { username: 'alice', uid: 'uid-1', groups: ['dev', AUTH] };
    keepPassableToken(user, { token: USER_TOKEN, expiresAt: Math.floor(Date.now() / 1000) + 3600, kid: 'rs' });
    kapi = await startKapi(backend.url, { user, passThrough });
    // the first request impersonates and starts the review; the next ones pass the token once it said yes
    await send(kapi.url, { path: '/api/v1/nodes', headers: auth });
    await until(() => passThrough.current !== 'unknown');
    return passThrough;
  }

  it('when kube-apiserver accepts kapi’s tokens, then it receives the caller’s own token and no Impersonate-*', async () => {
    await accepted();
    const first = backend.requests[0]!;
    expect(headerValues(first.rawHeaders, 'impersonate-user')).toEqual(['alice']);
    expect(first.headers.authorization).toBe(`Bearer ${KAPI_TOKEN}`);

    const answer = await send(kapi.url, { path: '/api/v1/nodes', headers: auth });
    expect(answer.status).toBe(200);
    const passed = backend.requests[1]!;
    expect(passed.headers.authorization).toBe(`Bearer ${USER_TOKEN}`);
    expect(passed.rawHeaders.filter((_, i) => i % 2 === 0).filter((name) => /^impersonate-/i.test(name))).toEqual([]);
    // a watch (the streaming path) and a write carry it too
    backend.onRequest = (_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    await send(kapi.url, { path: '/api/v1/nodes?watch=1', headers: auth });
    await send(kapi.url, {
      method: 'POST',
      path: '/api/v1/namespaces',
      headers: [...auth, 'Content-Type', 'application/json'],
      body: '{"metadata":{"name":"x"}}',
    });
    expect(backend.requests.slice(2).map((r) => r.headers.authorization)).toEqual([
      `Bearer ${USER_TOKEN}`,
      `Bearer ${USER_TOKEN}`,
    ]);
  });

  it('when a client sends Impersonate-* while tokens are passed, then it is still refused with 403', async () => {
    await accepted();
    const answer = await send(kapi.url, { path: '/api/v1/nodes', headers: [...auth, 'Impersonate-User', 'admin'] });
    expect(answer.status).toBe(403);
    expect(backend.requests).toHaveLength(1); // the first, impersonated one only
  });

  it('when kube-apiserver answers 401 to a passed token, then the caller gets a 503 to retry, and the retry is impersonated with kapi’s credentials', async () => {
    const passThrough = await accepted();
    backend.onRequest = refusingPassedTokens;
    const refused = await send(kapi.url, { path: '/api/v1/nodes', headers: auth });
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused.body)).toMatchObject({ kind: 'Status', code: 503 });
    expect(passThrough.current).toBe('refused');
    const retried = await send(kapi.url, { path: '/api/v1/nodes', headers: auth });
    expect(retried.status).toBe(200);
    const last = backend.requests.at(-1)!;
    expect(last.headers.authorization).toBe(`Bearer ${KAPI_TOKEN}`);
    expect(headerValues(last.rawHeaders, 'impersonate-user')).toEqual(['alice']);
  });

  it('when kube-apiserver answers 401 to a passed token on a watch (the streaming path), then it is a 503 to retry too', async () => {
    const passThrough = await accepted();
    backend.onRequest = refusingPassedTokens;
    const refused = await send(kapi.url, { path: '/api/v1/nodes?watch=1', headers: auth });
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(passThrough.current).toBe('refused');
  });

  it('when kube-apiserver maps kapi’s tokens to other names, then kapi keeps impersonating', async () => {
    await accepted({
      authenticated: true,
      username: `https://kapi.example#${PROBE_USERNAME}`,
      groups: [PROBE_USERNAME],
    });
    await send(kapi.url, { path: '/api/v1/nodes', headers: auth });
    expect(backend.requests.map((r) => r.headers.authorization)).toEqual([
      `Bearer ${KAPI_TOKEN}`,
      `Bearer ${KAPI_TOKEN}`,
    ]);
  });
});
