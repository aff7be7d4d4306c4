/**
 * The LoginRecorder against the sandbox Kubernetes API, as kapi's service account: records are buffered and written
 * one object per user per flush (a storm of one user's logins is one write), two replicas' writes merge, limits trim,
 * and the sweep deletes the histories of Users gone or past their age.
 */
import { LoginRecorder } from '../../../src/auth/login-records/login-recorder.js';
import type { LoginRecord } from '../../../src/auth/login-records/login-record.js';
import { userRecordFrom } from '../../../src/auth/users/user-record.js';
import { KubeApiError, KubeClient } from '../../../src/kube/client.js';
import { connectionFor, tokenAccess, type KubeConnection } from '../../../src/kube/connection.js';
import { createLogger } from '../../../src/observability/logger.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.js';

const logger = createLogger('error', { silent: true });
const USERS = '/apis/iam.kapi.io/v1beta1/users';
const HISTORIES = '/apis/iam.kapi.io/v1beta1/loginhistories';

let sandbox: Sandbox;
let admin: KubeClient;
let kapi: KubeClient;
const connections: KubeConnection[] = [];
let settings = { enabled: true, maxAgeSeconds: 3600, maxPerUser: 100 };
let now = Date.now();

beforeAll(async () => {
  sandbox = await startSandbox({ nodes: 1, podsPerNode: 0, logger });
  const adminConnection = connectionFor(tokenAccess(sandbox.url, sandbox.adminToken), 'sandbox');
  const kapiConnection = connectionFor(tokenAccess(sandbox.url, sandbox.serviceAccountToken), 'sandbox');
  connections.push(adminConnection, kapiConnection);
  admin = new KubeClient(adminConnection);
  kapi = new KubeClient(kapiConnection);
});

afterAll(async () => {
  for (const connection of connections) connection.close();
  await sandbox?.stop();
});

beforeEach(() => {
  settings = { enabled: true, maxAgeSeconds: 3600, maxPerUser: 100 };
  now = Date.now();
});

async function createUser(name: string): Promise<void> {
  await admin.request({
    method: 'POST',
    path: USERS,
    body: { apiVersion: 'iam.kapi.io/v1beta1', kind: 'User', metadata: { name }, spec: {} },
  });
}

function recorder(beforeUserRead: () => Promise<void> = async () => undefined): LoginRecorder {
  return new LoginRecorder({
    client: kapi,
    logger,
    settings: () => settings,
    user: async (name) => {
      await beforeUserRead();
      try {
        return userRecordFrom(await admin.request({ path: `${USERS}/${name}` }));
      } catch (error) {
        if (error instanceof KubeApiError && error.code === 404) return undefined;
        throw error;
      }
    },
    clock: () => now,
  });
}

const attempt = (offsetMs: number, result = 'success', sourceIP = '192.0.2.1'): LoginRecord => ({
  time: now + offsetMs,
  grant: 'password',
  provider: 'local',
  client: 'kapi',
  sourceIP,
  userAgent: 'test',
  result,
  reason: result,
});

async function stored(name: string): Promise<{ records: { time: string; result: string }[] } | undefined> {
  try {
    const object = await admin.request<{ spec: { records: { time: string; result: string }[] } }>({
      path: `${HISTORIES}/${name}`,
    });
    return object.spec;
  } catch (error) {
    if (error instanceof KubeApiError && error.code === 404) return undefined;
    throw error;
  }
}

describe('LoginRecorder', () => {
  it('when a user logs in 500 times between two flushes, then the records are one write, and reads show them before it', async () => {
    await createUser('storm');
    const records = recorder();
    for (let i = 0; i < 500; i++) records.record('storm', attempt(i, i % 2 ? 'failure' : 'success'));
    expect(await stored('storm')).toBeUndefined();
    expect(await records.read('storm')).toHaveLength(100);
    await records.flush();
    expect(records.writes).toBe(1);
    const history = await stored('storm');
    expect(history?.records).toHaveLength(100);
    // newest first
    expect(Date.parse(history!.records[0]!.time)).toBe(now + 499);
    await records.flush();
    expect(records.writes).toBe(1);
  });

  it('when a read comes while a flush is writing the records, then the read still shows them', async () => {
    await createUser('mid-flush');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let userReads = 0;
    // the flush's first step (reading the User) waits at the gate; the read's does not
    const records = recorder(() => (++userReads === 1 ? gate : Promise.resolve()));
    records.record('mid-flush', attempt(1, 'failure'));
    const flushed = records.flush();
    expect(userReads).toBe(1);
    expect((await records.read('mid-flush')).map((r) => r.result)).toEqual(['failure']);
    release();
    await flushed;
    expect((await stored('mid-flush'))?.records.map((r) => r.result)).toEqual(['failure']);
    expect(await records.read('mid-flush')).toHaveLength(1);
  });

  it('when two replicas record the same user, then nothing is lost: the second write merges the first', async () => {
    await createUser('two-replicas');
    const a = recorder();
    const b = recorder();
    a.record('two-replicas', attempt(1, 'success', '10.0.0.1'));
    b.record('two-replicas', attempt(2, 'failure', '10.0.0.2'));
    await Promise.all([a.flush(), b.flush()]);
    a.record('two-replicas', attempt(3, 'success', '10.0.0.1'));
    await a.flush();
    expect((await stored('two-replicas'))?.records.map((r) => r.result)).toEqual(['success', 'failure', 'success']);
    expect(await b.read('two-replicas')).toHaveLength(3);
  });

  it('when limits are lowered, then the next write keeps only the newest within the age', async () => {
    await createUser('trimmed');
    const records = recorder();
    for (let i = 0; i < 5; i++) records.record('trimmed', attempt(i * 1000));
    records.record('trimmed', attempt(-7200 * 1000, 'failure'));
    await records.flush();
    expect((await stored('trimmed'))?.records).toHaveLength(5);
    settings = { ...settings, maxPerUser: 2 };
    records.record('trimmed', attempt(10_000));
    await records.flush();
    expect((await stored('trimmed'))?.records.map((r) => Date.parse(r.time))).toEqual([now + 10_000, now + 4000]);
  });

  it('when records are off, then nothing is buffered or written', async () => {
    await createUser('off');
    settings = { ...settings, enabled: false };
    const records = recorder();
    records.record('off', attempt(1));
    await records.flush();
    expect(records.writes).toBe(0);
    expect(await stored('off')).toBeUndefined();
  });

  it('when a user is deleted before the flush, then no history is made for the name', async () => {
    await createUser('gone-before');
    const records = recorder();
    records.record('gone-before', attempt(1));
    await admin.request({ method: 'DELETE', path: `${USERS}/gone-before` });
    await records.flush();
    expect(await stored('gone-before')).toBeUndefined();
  });

  it('when the sweep runs, then histories of deleted users and those past the age go, the others stay', async () => {
    await createUser('keep');
    await createUser('deleted');
    await createUser('old');
    const records = recorder();
    records.record('keep', attempt(1));
    records.record('deleted', attempt(1));
    records.record('old', attempt(1));
    await records.flush();
    await admin.request({ method: 'DELETE', path: `${USERS}/deleted` });
    // 'old' only has records past the age once time moves on; 'keep' logs in again then
    now += 2 * 3600 * 1000;
    records.record('keep', attempt(1));
    await records.flush();
    await recorder().sweep();
    expect(await stored('keep')).toBeDefined();
    expect(await stored('deleted')).toBeUndefined();
    expect(await stored('old')).toBeUndefined();
  });

  it('when a User is deleted and created again, then the new one does not see the old one’s records', async () => {
    await createUser('reborn');
    const records = recorder();
    records.record('reborn', attempt(1, 'failure'));
    await records.flush();
    await admin.request({ method: 'DELETE', path: `${USERS}/reborn` });
    await createUser('reborn');
    expect(await recorder().read('reborn')).toEqual([]);
    records.record('reborn', attempt(2));
    await records.flush();
    expect((await stored('reborn'))?.records.map((r) => r.result)).toEqual(['success']);
  });
});
