import {
  candidateUserNames,
  linkedUserObject,
  sessionGroups,
  upstreamUserIdHash,
} from '../../../src/auth/providers/user-link.js';
import { isObjectName } from '../../../src/auth/kube-names.js';
import { userRecordFrom } from '../../../src/auth/users/user-record.js';

const identity = (username: string, userId = `uid=${username},ou=people,dc=kapi,dc=test`) => ({
  provider: 'corp',
  userId,
  username,
});

describe('candidateUserNames', () => {
  it.each([
    ['alice', 'alice'],
    ['Alice.Smith', 'alice-smith'],
    ['Jürgen Müller', 'jurgen-muller'],
    ['ÉLODIE', 'elodie'],
    ['a__b--c', 'a-b-c'],
    ['-edge-', 'edge'],
    ['x'.repeat(300), 'x'.repeat(63)],
  ])('when the upstream name is %p, then the first candidate is %p', (username, first) => {
    expect(candidateUserNames(identity(username))[0]).toBe(first);
  });

  it('when the name is taken, then the second candidate carries a digest of provider and id, different per identity', () => {
    const [, second] = candidateUserNames(identity('alice'));
    expect(second).toMatch(/^alice-[0-9a-f]{8}$/);
    expect(candidateUserNames(identity('alice', 'other-id'))[1]).not.toBe(second);
    expect(candidateUserNames({ ...identity('alice'), provider: 'other' })[1]).not.toBe(second);
  });

  it.each([['山田太郎'], ['***'], [''], ['\u0000']])(
    'when nothing of %p is usable, then the only candidate is the provider and a digest',
    (username) => {
      expect(candidateUserNames(identity(username))).toEqual([expect.stringMatching(/^corp-[0-9a-f]{8}$/)]);
    },
  );

  it.each([['alice'], ['x'.repeat(300)], ['Jürgen'], ['a.b'], ['山田'], ['*)(uid=*']])(
    'when the upstream name is %p, then every candidate is a valid object name',
    (username) => {
      for (const name of candidateUserNames(identity(username))) expect(isObjectName(name)).toBe(true);
    },
  );
});

describe('linkedUserObject', () => {
  it('when a User is made for an identity, then it reads back linked, without password or groups of its own', () => {
    const object = linkedUserObject(
      { ...identity('alice'), email: 'alice@kapi.test', groups: ['devs'] },
      'alice',
      true,
    );
    const user = userRecordFrom(object);
    expect(user).toMatchObject({
      name: 'alice',
      email: 'alice@kapi.test',
      groups: [],
      passwordHash: undefined,
      link: { provider: 'corp', userId: 'uid=alice,ou=people,dc=kapi,dc=test', username: 'alice' },
    });
    expect((object.metadata as { labels: Record<string, string> }).labels).toEqual({
      'iam.kapi.io/identity-provider': 'corp',
      'iam.kapi.io/upstream-user-id-hash': upstreamUserIdHash('uid=alice,ou=people,dc=kapi,dc=test'),
    });
    expect(upstreamUserIdHash('x')).toMatch(/^sha256-[0-9a-f]{56}$/);
  });

  it.each([
    ['another User has the address', 'alice@kapi.test', false],
    ['the address is not one', 'not an address', true],
    ['the address is too long', `${'a'.repeat(250)}@x.io`, true],
  ])('when %s, then the User gets no e-mail', (_case, email, free) => {
    const object = linkedUserObject({ ...identity('alice'), email, groups: [] }, 'alice', free);
    expect((object.spec as { email?: string }).email).toBeUndefined();
  });
});

describe('sessionGroups', () => {
  it.each([
    [['devs', 'ops'], '', ['devs', 'ops']],
    [['devs', 'devs'], '', ['devs']],
    [['system:masters', 'system:authenticated', 'devs'], '', ['devs']],
    [['system:masters', 'devs'], 'corp:', ['corp:devs']],
    [['devs'], 'system:', []],
    [['', 'x'.repeat(254), 'tab\there', 'ok'], '', ['ok']],
    [['devs'], 'ldap:', ['ldap:devs']],
  ])('when the provider says %j with prefix %p, then the session keeps %j', (groups, prefix, kept) => {
    expect(sessionGroups(groups, prefix)).toEqual(kept);
  });

  it('when a provider gives 1,000 groups, then the session keeps 256', () => {
    expect(
      sessionGroups(
        Array.from({ length: 1000 }, (_, i) => `g${i}`),
        '',
      ),
    ).toHaveLength(256);
  });
});
