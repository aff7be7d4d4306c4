import {
  RevocationEvents,
  userChangeRevocations,
  userDeletedRevocation,
  type Revocation,
} from '../../../src/auth/sessions/revocations.js';
import { ClusterSessionStore } from '../../../src/auth/sessions/sessions.js';
import type { UserRecord, UserState } from '../../../src/auth/users/user-record.js';
import { capturingLogger } from '../fakes.js';
import { kubeError, stubClient } from '../stub-client.js';

const SID = '0123456789abcdef0123456789abcdef';

/** `uid` null: a User whose uid is unknown. */
const userRecord = (state: UserState, uid: string | null = 'u1'): UserRecord => ({
  name: 'alice',
  uid: uid ?? undefined,
  resourceVersion: '1',
  groups: [],
  state,
  failedLogins: [],
});

describe('userChangeRevocations', () => {
  test.each<[string, UserRecord, UserRecord | undefined, Revocation[]]>([
    [
      'when a user is disabled, then all of its name is revoked',
      userRecord('Disabled'),
      userRecord('Active'),
      [{ kind: 'user', username: 'alice' }],
    ],
    [
      'when a disabled user is seen first (a relist), then it is revoked too',
      userRecord('Disabled'),
      undefined,
      [{ kind: 'user', username: 'alice' }],
    ],
    [
      'when a user is locked out (AuthLimitExceeded), then nothing is revoked',
      userRecord('AuthLimitExceeded'),
      userRecord('Active'),
      [],
    ],
    ['when an active user changes otherwise, then nothing is revoked', userRecord('Active'), userRecord('Active'), []],
    ['when a user is added, then nothing is revoked', userRecord('Active'), undefined, []],
    [
      'when a user was deleted and created again unseen, then the old incarnation is revoked',
      userRecord('Active', 'u2'),
      userRecord('Active', 'u1'),
      [{ kind: 'user', username: 'alice', uid: 'u1' }],
    ],
    [
      'when uids are unknown, then no incarnation change is guessed',
      userRecord('Active', null),
      userRecord('Active', 'u1'),
      [],
    ],
  ])('%s', (_case, user, old, expected) => {
    expect(userChangeRevocations(user, old)).toEqual(expected);
  });

  test('when a user is deleted, then that incarnation is revoked (all of the name when its uid is unknown)', () => {
    expect(userDeletedRevocation(userRecord('Active', 'u1'))).toEqual({ kind: 'user', username: 'alice', uid: 'u1' });
    expect(userDeletedRevocation(userRecord('Active', null))).toEqual({ kind: 'user', username: 'alice' });
  });
});

describe('RevocationEvents', () => {
  test('when a listener throws, then the others still hear it and the failure is logged', () => {
    const { logger, lines } = capturingLogger();
    const events = new RevocationEvents(logger);
    const heard: Revocation[] = [];
    events.on(() => {
      throw new Error('boom');
    });
    const off = events.on((r) => heard.push(r));
    events.emit({ kind: 'session', sessionId: SID });
    off();
    events.emit({ kind: 'session', sessionId: 'other' });
    expect(heard).toEqual([{ kind: 'session', sessionId: SID }]);
    expect(lines.some((line) => line.includes('revocation listener failed'))).toBe(true);
  });
});

describe('ClusterSessionStore revocations', () => {
  test('when a session is deleted on this replica, then it is reported at once, before the cluster answers', async () => {
    let answer!: () => void;
    const client = stubClient(() => new Promise((_resolve, reject) => (answer = () => reject(kubeError(404)))));
    const store = new ClusterSessionStore(client, capturingLogger().logger);
    const heard: Revocation[] = [];
    store.onRevoked((r) => heard.push(r));
    const deleting = store.delete(SID);
    expect(heard).toEqual([{ kind: 'session', sessionId: SID }]);
    answer();
    await deleting;
  });

  test('when the id is no session id, then nothing is reported', async () => {
    const client = stubClient(() => ({}));
    const store = new ClusterSessionStore(client, capturingLogger().logger);
    const heard: Revocation[] = [];
    store.onRevoked((r) => heard.push(r));
    await store.delete('../users/admin');
    expect(heard).toEqual([]);
  });
});
