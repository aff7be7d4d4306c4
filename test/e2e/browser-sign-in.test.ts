/**
 * Sign-in from a browser across two kapi replicas on one cluster (the sandbox, or the one KUBECONFIG names): a code
 * from one replica redeems on the other, and a code is single-use across both, whether the second redemption comes
 * later or at the same moment. Plain HTTP with a cookie jar (the Chromium suite drives the same pages for real).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ClusterCodeRedemptions, CODE_REDEMPTIONS_PATH } from '../../src/auth/browser/code-redemptions.js';
import { codeDigest } from '../../src/auth/browser/authorization-codes.js';
import { BROWSER_SESSION_CLIENT } from '../../src/auth/browser/browser-sessions.js';
import { formFields, pkce } from '../auth/browser/browser-client.js';
import { assertTarget } from './forwarding-target.js';
import { E2E_CONSOLE, silentLogger, startE2E, waitFor, type E2E } from './harness.js';

const PASSWORD = 'e2e-Browser-passw0rd';
const NODES = '/kapis/resources.kapi.io/v1alpha3/nodes?limit=1';
const REDIRECT = 'http://127.0.0.1:39999/console/callback';

let e2e: E2E;
let user: string;
let A: string;
let B: string;

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  user = await e2e.createUser('browser', PASSWORD);
  await e2e.grant(user, [
    { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] },
    { apiGroups: [''], resources: ['namespaces'], verbs: ['list'] },
  ]);
  A = e2e.kapiUrl;
  B = `http://127.0.0.1:${(await e2e.startReplica()).httpPort}`;
}, 120_000);

afterAll(async () => {
  await e2e?.stop();
});

/** A browser: follows nothing by itself, keeps the cookies kapi sets. */
class Browser {
  readonly cookies = new Map<string, string>();

  async fetch(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const res = await fetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: {
        Cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(init.form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: init.form ? new URLSearchParams(init.form) : undefined,
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const value = pair!.slice(at + 1);
      if (value === '') this.cookies.delete(pair!.slice(0, at));
      else this.cookies.set(pair!.slice(0, at), value);
    }
    return res;
  }
}

function authorizeUrl(base: string, challenge: string): string {
  return `${base}/oauth/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: E2E_CONSOLE.id,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'openid profile',
    state: 's',
  }).toString()}`;
}

/** The login page of `base` with this browser; the code that comes back. */
async function signIn(browser: Browser, base: string, challenge: string): Promise<string> {
  const started = await browser.fetch(authorizeUrl(base, challenge));
  expect(started.status).toBe(303);
  const location = started.headers.get('location')!;
  if (location.startsWith(REDIRECT)) return new URL(location).searchParams.get('code')!;
  const page = await browser.fetch(`${base}${location}`);
  expect(page.status).toBe(200);
  const answer = await browser.fetch(`${base}/oauth/login`, {
    method: 'POST',
    form: { ...formFields(await page.text()), username: user, password: PASSWORD, action: 'login' },
  });
  expect(answer.status).toBe(303);
  return new URL(answer.headers.get('location')!).searchParams.get('code')!;
}

function redeem(base: string, code: string, verifier: string): Promise<Response> {
  return fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id: E2E_CONSOLE.id,
      client_secret: E2E_CONSOLE.secret,
    }),
  });
}

async function status(url: string, token: string): Promise<number> {
  const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status;
}

/** Waits until `base` refuses the token: a replica that did not end the session itself learns it from its watch. */
async function endsOn(base: string, token: string): Promise<void> {
  await waitFor(async () => (await status(`${base}${NODES}`, token)) === 401);
}

interface Tokens {
  access_token: string;
  id_token: string;
}

describe('when a browser signs in through two replicas', () => {
  it('then a code from replica A redeems at replica B, and its token reads /kapis and /api on both', async () => {
    const { verifier, challenge } = pkce();
    const code = await signIn(new Browser(), A, challenge);
    const res = await redeem(B, code, verifier);
    expect(res.status).toBe(200);
    const tokens = (await res.json()) as Tokens;
    for (const base of [A, B]) {
      expect(await status(`${base}${NODES}`, tokens.access_token)).toBe(200);
      expect(await status(`${base}/api/v1/namespaces`, tokens.access_token)).toBe(200);
    }
  });

  it('then the redemption is recorded in the cluster under a digest of the code, without the code', async () => {
    const { verifier, challenge } = pkce();
    const code = await signIn(new Browser(), A, challenge);
    expect((await redeem(A, code, verifier)).status).toBe(200);
    const record = await e2e.admin.request<{ spec: Record<string, string> }>({
      path: `${CODE_REDEMPTIONS_PATH}/${codeDigest(code)}`,
    });
    expect(record.spec).toMatchObject({ clientId: E2E_CONSOLE.id, username: user, sessionId: expect.any(String) });
    expect(JSON.stringify(record)).not.toContain(code);
  });

  it('then a code redeemed at A is refused at B, the session it started ends, and a third try is refused too', async () => {
    const { verifier, challenge } = pkce();
    const code = await signIn(new Browser(), A, challenge);
    const first = await redeem(A, code, verifier);
    expect(first.status).toBe(200);
    const tokens = (await first.json()) as Tokens;
    const again = await redeem(B, code, verifier);
    expect([again.status, ((await again.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);
    // B ended the session itself; A learns it from its watch of the LoginSessions
    expect(await status(`${B}${NODES}`, tokens.access_token)).toBe(401);
    await endsOn(A, tokens.access_token);
    const third = await redeem(A, code, verifier);
    expect(third.status).toBe(400);
    await third.arrayBuffer();
  });

  it('then of two redemptions at the same moment on A and B exactly one gets tokens, and those stop working', async () => {
    for (let round = 0; round < 3; round++) {
      const { verifier, challenge } = pkce();
      const code = await signIn(new Browser(), A, challenge);
      const answers = await Promise.all([redeem(A, code, verifier), redeem(B, code, verifier)]);
      expect(answers.map((res) => res.status).sort()).toEqual([200, 400]);
      const winner = answers.find((res) => res.status === 200)!;
      const tokens = (await winner.json()) as Tokens;
      await Promise.all(answers.filter((res) => res !== winner).map((res) => res.arrayBuffer()));
      // the losing replica ended the session; the other learns it from its watch
      for (const base of [A, B]) await endsOn(base, tokens.access_token);
    }
  });

  it('then the browser session is a LoginSession of client (browser), and deleting it signs the browser out on both', async () => {
    const browser = new Browser();
    await signIn(browser, A, pkce().challenge);
    // single sign-on: replica B issues a code to the same browser without the login page
    const viaB = await browser.fetch(authorizeUrl(B, pkce().challenge));
    expect(viaB.headers.get('location')).toMatch(/^http:\/\/127\.0\.0\.1:39999\/console\/callback\?code=/);

    const sessions = await e2e.admin.request<{ items: { metadata: { name: string }; spec: { clientId: string } }[] }>({
      path: '/apis/iam.kapi.io/v1beta1/loginsessions',
      query: { labelSelector: `iam.kapi.io/username=${user}` },
    });
    const browserSessions = sessions.items.filter((s) => s.spec.clientId === BROWSER_SESSION_CLIENT);
    expect(browserSessions.length).toBeGreaterThan(0);
    for (const session of browserSessions) {
      await e2e.admin.request({
        method: 'DELETE',
        path: `/apis/iam.kapi.io/v1beta1/loginsessions/${session.metadata.name}`,
      });
    }
    // both replicas learn of the deletion from their watch of the LoginSessions, each at its own moment
    for (const base of [A, B]) {
      await waitFor(async () => {
        const res = await browser.fetch(authorizeUrl(base, pkce().challenge));
        await res.arrayBuffer();
        return /^\/oauth\/login\?request=/.test(res.headers.get('location') ?? '');
      });
    }
  });

  it('then records of expired codes are swept from the cluster', async () => {
    const { verifier, challenge } = pkce();
    const code = await signIn(new Browser(), A, challenge);
    expect((await redeem(A, code, verifier)).status).toBe(200);
    const later = new ClusterCodeRedemptions(e2e.admin, silentLogger, () => Date.now() + 10 * 60_000);
    expect(await later.sweep()).toBeGreaterThan(0);
    await expect(e2e.admin.request({ path: `${CODE_REDEMPTIONS_PATH}/${codeDigest(code)}` })).rejects.toMatchObject({
      code: 404,
    });
  });
});
