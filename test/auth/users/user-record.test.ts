import { userRecordFrom } from '../../../src/auth/users/user-record.js';

describe('userRecordFrom', () => {
  test('when a User has only a spec (kubectl apply), then it is Active with no failures', () => {
    expect(
      userRecordFrom({
        metadata: { name: 'alice', uid: 'u-1', resourceVersion: '5' },
        spec: { email: 'alice@example.com', password: '$2y$10$abc', groups: ['dev', 'dev', 'ops'] },
      }),
    ).toEqual({
      name: 'alice',
      uid: 'u-1',
      resourceVersion: '5',
      email: 'alice@example.com',
      passwordHash: '$2y$10$abc',
      groups: ['dev', 'ops'],
      state: 'Active',
      lockedUntil: undefined,
      failedLogins: [],
    });
  });

  test('when the status holds a lock and failures, then they are read as times', () => {
    const user = userRecordFrom({
      metadata: { name: 'bob' },
      spec: {},
      status: {
        state: 'AuthLimitExceeded',
        lockedUntil: '2031-01-01T00:10:00Z',
        failedLogins: [{ time: '2031-01-01T00:00:00Z', sourceIP: '1.2.3.4' }, { time: 'garbage' }],
      },
    });
    expect(user.state).toBe('AuthLimitExceeded');
    expect(user.lockedUntil).toBe(Date.parse('2031-01-01T00:10:00Z'));
    expect(user.failedLogins).toEqual([{ time: Date.parse('2031-01-01T00:00:00Z'), sourceIP: '1.2.3.4' }]);
  });

  test('when fields have the wrong types, then they count as absent and an unknown state as Active', () => {
    const user = userRecordFrom({
      metadata: { name: 'c' },
      spec: { groups: 'admins', password: 7 },
      status: { state: 'Root' },
    });
    expect(user).toMatchObject({ groups: [], passwordHash: undefined, state: 'Active' });
  });

  test('when a User lists reserved system: groups, then they are dropped so they are never impersonated', () => {
    const user = userRecordFrom({
      metadata: { name: 'mallory' },
      spec: { groups: ['system:masters', 'dev', 'system:authenticated', 'system:nodes'] },
    });
    expect(user.groups).toEqual(['dev']);
  });

  test('when a User has no name, then reading it fails', () => {
    expect(() => userRecordFrom({ metadata: {} })).toThrow(/metadata.name/);
  });
});
