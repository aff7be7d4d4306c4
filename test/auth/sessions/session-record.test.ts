import {
  ROTATION_GRACE_SECONDS,
  USERNAME_LABEL,
  USER_UID_ANNOTATION,
  belongsTo,
  decideRefresh,
  isSessionId,
  loginSessionFrom,
  loginSessionObject,
  newSessionId,
  rotatedSpec,
  sessionsBeyondCap,
  usernameLabelValue,
  type LoginSession,
  type SessionSpec,
} from '../../../src/auth/sessions/session-record.js';

const NOW = 2_000_000_000;
const rotated: SessionSpec = {
  username: 'alice',
  clientId: 'kapi',
  expiresAt: NOW + 3600,
  refreshTokenId: 'current',
  previousRefreshTokenId: 'previous',
  rotatedAt: NOW - 2,
};

describe('decideRefresh', () => {
  const cases: Array<[string, Partial<SessionSpec>, string, string]> = [
    ['when the current refresh token is used, then it rotates', {}, 'current', 'rotate'],
    [
      'when the just-replaced token is used within the grace, then the current one is replayed',
      {},
      'previous',
      'replay',
    ],
    [
      'when the replaced token is used exactly at the end of the grace, then it is still replayed',
      { rotatedAt: NOW - ROTATION_GRACE_SECONDS },
      'previous',
      'replay',
    ],
    [
      'when the replaced token is used after the grace, then it is reuse',
      { rotatedAt: NOW - ROTATION_GRACE_SECONDS - 1 },
      'previous',
      'reuse',
    ],
    ['when an older token is used, then it is reuse', {}, 'older', 'reuse'],
    [
      'when the session was never rotated and an unknown token is used, then it is reuse',
      { previousRefreshTokenId: undefined, rotatedAt: undefined },
      'previous',
      'reuse',
    ],
    [
      'when the session has ended, then it is expired even for the current token',
      { expiresAt: NOW },
      'current',
      'expired',
    ],
  ];
  test.each(cases)('%s', (_name, overrides, jti, expected) => {
    expect(decideRefresh({ ...rotated, ...overrides }, jti, NOW)).toBe(expected);
  });
});

describe('rotatedSpec', () => {
  test('when a session rotates, then the old id becomes previous, the time is noted and the end moves out', () => {
    expect(rotatedSpec(rotated, 'next', NOW, 14_400)).toEqual({
      username: 'alice',
      clientId: 'kapi',
      expiresAt: NOW + 14_400,
      refreshTokenId: 'next',
      previousRefreshTokenId: 'current',
      rotatedAt: NOW,
    });
  });
});

describe('LoginSession objects', () => {
  test('when a session is written and read back, then nothing is lost (times in whole seconds)', () => {
    const object = loginSessionObject('0123456789abcdef0123456789abcdef', rotated);
    expect(object).toMatchObject({
      apiVersion: 'iam.kapi.io/v1beta1',
      kind: 'LoginSession',
      metadata: { name: '0123456789abcdef0123456789abcdef', labels: { [USERNAME_LABEL]: 'alice' } },
      spec: { expiresAt: '2033-05-18T04:33:20Z', rotatedAt: '2033-05-18T03:33:18Z' },
    });
    const read = loginSessionFrom({ ...object, metadata: { ...(object.metadata as object), resourceVersion: '7' } });
    expect(read).toMatchObject({ ...rotated, id: '0123456789abcdef0123456789abcdef', resourceVersion: '7' });
  });

  test("when a session is replaced, then its resourceVersion is the precondition and others' labels stay", () => {
    const existing = loginSessionFrom({
      metadata: { name: 'abc', resourceVersion: '42', labels: { team: 'x' }, managedFields: [{}] },
      spec: { username: 'alice', clientId: 'kapi', expiresAt: '2033-01-01T00:00:00Z', refreshTokenId: 'a' },
    });
    const object = loginSessionObject('abc', rotated, existing) as { metadata: Record<string, unknown> };
    expect(object.metadata).toEqual({
      name: 'abc',
      resourceVersion: '42',
      labels: { team: 'x', [USERNAME_LABEL]: 'alice' },
    });
  });

  test('when a session records the user uid, then it travels in an annotation and survives a rotation', () => {
    const object = loginSessionObject('abc', { ...rotated, userUid: 'u-1' }) as { metadata: Record<string, unknown> };
    expect(object.metadata.annotations).toEqual({ [USER_UID_ANNOTATION]: 'u-1' });
    const read = loginSessionFrom({ ...object, metadata: { ...object.metadata, resourceVersion: '1' } });
    expect(read.userUid).toBe('u-1');
    expect(rotatedSpec(read, 'n', NOW, 60).userUid).toBe('u-1');
  });

  test.each([
    { has: 'the same name and uid', user: { name: 'alice', uid: 'u-1' }, belongs: true },
    { has: 'the same name and no known uid', user: { name: 'alice' }, belongs: true },
    {
      has: 'the same name and another uid (deleted, created again)',
      user: { name: 'alice', uid: 'u-2' },
      belongs: false,
    },
    { has: 'another name', user: { name: 'bob', uid: 'u-1' }, belongs: false },
  ])('when the user has $has, then the session belongs to it: $belongs', ({ user, belongs }) => {
    expect(belongsTo({ ...rotated, userUid: 'u-1' }, user)).toBe(belongs);
  });

  test('when a LoginSession lacks required fields, then reading it fails (the cache skips it)', () => {
    expect(() => loginSessionFrom({ metadata: { name: 'x' }, spec: { username: 'a' } })).toThrow(/required/);
    expect(() =>
      loginSessionFrom({
        metadata: { name: 'x' },
        spec: { username: 'a', clientId: 'c', refreshTokenId: 'r', expiresAt: 'soon' },
      }),
    ).toThrow(/not a time/);
  });
});

describe('session ids and labels', () => {
  test('when ids are made, then they are valid object names, 128 random bits, and recognised', () => {
    const ids = new Set(Array.from({ length: 20 }, newSessionId));
    expect(ids.size).toBe(20);
    for (const id of ids) expect(isSessionId(id)).toBe(true);
    expect(isSessionId('../users/admin')).toBe(false);
  });

  test('when a user name fits a label value, then it is the label value', () => {
    expect(usernameLabelValue('alice.smith')).toBe('alice.smith');
  });

  test('when a user name is longer than a label value allows, then a digest stands in for it', () => {
    const long = `${'a'.repeat(70)}.example`;
    const value = usernameLabelValue(long);
    expect(value).toMatch(/^sha256-[0-9a-f]{56}$/);
    expect(value.length).toBeLessThanOrEqual(63);
    expect(usernameLabelValue(long)).toBe(value);
  });
});

describe('sessionsBeyondCap', () => {
  const session = (id: string, loginTime?: number): LoginSession => ({
    id,
    resourceVersion: '1',
    username: 'alice',
    clientId: 'kapi',
    expiresAt: NOW + 3600,
    refreshTokenId: `jti-${id}`,
    loginTime,
  });
  const ids = (sessions: LoginSession[]) => sessions.map((s) => s.id);

  test.each([
    ['fewer sessions than the cap', [session('a', 1), session('b', 2)], 3, []],
    ['exactly the cap', [session('a', 1), session('b', 2), session('c', 3)], 3, []],
    [
      'two beyond the cap: the first two logins end',
      [session('c', 3), session('a', 1), session('e', 5), session('b', 2), session('d', 4)],
      3,
      ['b', 'a'],
    ],
    [
      'logins within one millisecond: the id decides, the same on every replica',
      [session('x', 7), session('y', 7)],
      1,
      ['x'],
    ],
    ['a session of an older version without a login time: the oldest', [session('old'), session('new', 1)], 1, ['old']],
    ['a cap of one: only the newest stays', [session('a', 1), session('b', 2), session('c', 3)], 1, ['b', 'a']],
  ])('when %s, then those ended are %j', (_case, sessions, cap, ended) => {
    expect(ids(sessionsBeyondCap(sessions as LoginSession[], cap as number))).toEqual(ended);
  });
});

describe('login time', () => {
  test('when a session is written and read back, then its login time keeps the millisecond', () => {
    const loginTime = Date.parse('2033-05-18T03:33:20.123Z');
    const object = loginSessionObject(newSessionId(), { ...rotated, loginTime });
    expect((object.spec as Record<string, unknown>).loginTime).toBe('2033-05-18T03:33:20.123Z');
    expect(
      loginSessionFrom({ ...object, metadata: { ...(object.metadata as object), resourceVersion: '1' } }).loginTime,
    ).toBe(loginTime);
  });

  test('when a session of an older version has no login time, then its creation time stands in', () => {
    const object = loginSessionObject(newSessionId(), rotated);
    const read = loginSessionFrom({
      ...object,
      metadata: { ...(object.metadata as object), creationTimestamp: '2033-05-18T03:33:20Z' },
    });
    expect(read.loginTime).toBe(Date.parse('2033-05-18T03:33:20Z'));
  });

  test('when a session rotates, then its login time stays', () => {
    expect(rotatedSpec({ ...rotated, loginTime: 42 }, 'next', NOW, 3600).loginTime).toBe(42);
  });
});
