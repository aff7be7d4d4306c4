import {
  boundedRecord,
  isStale,
  keptRecords,
  loginHistoryFrom,
  loginHistoryObject,
  type LoginRecord,
} from '../../../src/auth/login-records/login-record.js';

const NOW = Date.parse('2031-03-04T05:06:07.123Z');
const record = (secondsAgo: number, result = 'success'): LoginRecord => ({
  time: NOW - secondsAgo * 1000,
  grant: 'password',
  provider: 'local',
  client: 'kapi',
  sourceIP: '192.0.2.1',
  userAgent: 'curl/8',
  result,
  reason: result === 'success' ? 'tokens issued' : 'wrong password',
});

describe('login records, pure', () => {
  it('when records are kept, then they are newest first, within the age, at most the count, each once', () => {
    const records = [record(5), record(1), record(7200, 'failure'), record(3), record(1)];
    expect(keptRecords(records, NOW, { maxAgeSeconds: 3600, maxPerUser: 2 })).toEqual([record(1), record(3)]);
    expect(keptRecords(records, NOW, { maxAgeSeconds: 86_400, maxPerUser: 10 })).toHaveLength(4);
  });

  it('when a client sends a huge or unprintable user agent, then the record keeps 256 printable characters', () => {
    const bounded = boundedRecord({ ...record(1), userAgent: `evil\u0000\n${'x'.repeat(5000)}` });
    expect(bounded.userAgent).toHaveLength(256);
    expect(bounded.userAgent.startsWith('evil??')).toBe(true);
  });

  it('when a history is written and read back, then it is the same, owned by the User', () => {
    const history = {
      username: 'alice',
      ownerUid: 'uid-1',
      resourceVersion: '',
      records: [record(1), { ...record(2), via: 'login_page' }],
    };
    const object = loginHistoryObject(history);
    expect(object.metadata).toMatchObject({
      name: 'alice',
      labels: { 'iam.kapi.io/username': 'alice' },
      ownerReferences: [{ apiVersion: 'iam.kapi.io/v1beta1', kind: 'User', name: 'alice', uid: 'uid-1' }],
    });
    expect((object.spec as { records: { time: string }[] }).records[0]!.time).toBe('2031-03-04T05:06:06.123Z');
    expect(loginHistoryFrom({ ...object, metadata: { ...(object.metadata as object), resourceVersion: '7' } })).toEqual(
      {
        ...history,
        resourceVersion: '7',
      },
    );
  });

  it('when every record is past the age, then the history is stale', () => {
    const history = { username: 'a', resourceVersion: '1', records: [record(7200), record(4000)] };
    expect(isStale(history, NOW, 3600)).toBe(true);
    expect(isStale({ ...history, records: [...history.records, record(10)] }, NOW, 3600)).toBe(false);
  });
});
