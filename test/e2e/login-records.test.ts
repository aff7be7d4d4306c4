/**
 * Login records end to end, on the sandbox or the cluster KUBECONFIG names, with two kapi replicas: successes and
 * failures are recorded with their details, land in the user's LoginHistory object (one per user), are read on the
 * other replica once written, and are trimmed to the configured count; another user may not read them.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startE2E, waitFor, type E2E } from './harness.js';
import { ConfigurationUnderTest } from './identity-config.js';
import { DEFAULT_CLIENT, KapiCaller } from './identity-http.js';
import { assertTarget } from './target.js';

const PASSWORD = 'e2e-Records-Passw0rd';
const PROBE_PASSWORD = 'e2e-Records-probe-Passw0rd';
const IAM = '/kapis/iam.kapi.io/v1beta1';

interface RecordList {
  items: {
    time: string;
    grant: string;
    result: string;
    reason: string;
    sourceIP: string;
    userAgent: string;
    provider: string;
  }[];
  totalItems: number;
}

let e2e: E2E;
let other: string;
let config: ConfigurationUnderTest;
const caller = new KapiCaller();
let user: string;
let stranger: string;

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  other = `http://127.0.0.1:${(await e2e.startReplica()).httpPort}`;
  user = await e2e.createUser('records', PASSWORD);
  stranger = await e2e.createUser('records-stranger', PASSWORD);
  const probe = await e2e.createUser('records-probe', PROBE_PASSWORD);
  caller.remember('password', PASSWORD, PROBE_PASSWORD);
  config = new ConfigurationUnderTest(e2e.admin, e2e.configuration, caller, {
    username: probe,
    password: PROBE_PASSWORD,
  });
  await config.load();
  await config.apply({ loginRecords: { maxPerUser: 3, maxAge: '1h' } }, [e2e.kapiUrl, other]);
}, 120_000);

afterAll(async () => {
  await config?.restore([e2e.kapiUrl, other]).catch(() => undefined);
  await e2e?.stop();
});

function attempt(password: string) {
  return caller.token(
    e2e.kapiUrl,
    {
      grant_type: 'password',
      username: user,
      password,
      client_id: DEFAULT_CLIENT.id,
      client_secret: DEFAULT_CLIENT.secret,
    },
    { headers: { 'User-Agent': 'e2e-records/1.0' } },
  );
}

describe('login records', () => {
  it('when a user logs in and fails, then the other replica shows the newest three, with their details', async () => {
    expect((await attempt(PASSWORD)).status).toBe(200);
    expect((await attempt(PASSWORD)).status).toBe(200);
    expect((await attempt('e2e-wrong-password')).status).toBe(400);
    expect((await attempt('e2e-wrong-password')).status).toBe(400);
    const { access_token } = await caller.login(other, user, PASSWORD);
    let list: RecordList | undefined;
    // the first replica writes its records within a couple of seconds; the second then reads them
    await waitFor(async () => {
      const answer = await caller.get<RecordList>(`${other}${IAM}/users/${user}/loginrecords`, access_token);
      list = answer.body;
      return (
        answer.status === 200 && list.totalItems === 3 && list.items.filter((r) => r.result === 'failure').length === 2
      );
    });
    expect(list!.items.map((r) => r.result)).toEqual(['success', 'failure', 'failure']);
    expect(list!.items[1]).toMatchObject({
      grant: 'password',
      provider: 'local',
      sourceIP: expect.stringMatching(/127\.0\.0\.1/),
      userAgent: 'e2e-records/1.0',
      reason: 'wrong password',
    });
    expect(JSON.stringify(list)).not.toContain(PASSWORD);
  });

  it('when the records are written, then the cluster holds one LoginHistory for the user, trimmed and owned by the User', async () => {
    let history:
      { metadata: { ownerReferences?: { kind: string; name: string }[] }; spec: { records: unknown[] } } | undefined;
    await waitFor(async () => {
      history = await e2e.admin
        .request<NonNullable<typeof history>>({ path: `/apis/iam.kapi.io/v1beta1/loginhistories/${user}` })
        .catch(() => undefined);
      return (history?.spec.records.length ?? 0) === 3;
    });
    expect(history!.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'User', name: user })]);
  });

  it('when another user asks for them, then 403', async () => {
    const { access_token } = await caller.login(e2e.kapiUrl, stranger, PASSWORD);
    const answer = await caller.get(`${e2e.kapiUrl}${IAM}/users/${user}/loginrecords`, access_token);
    expect(answer.status).toBe(403);
  });
});
