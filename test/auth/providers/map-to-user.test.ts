import { signInUpstream } from '../../../src/auth/providers/map-to-user.js';
import type { UpstreamIdentity } from '../../../src/auth/providers/identity-provider.js';
import type { UserRecord } from '../../../src/auth/users/user-record.js';
import { InMemoryUserStore, capturingLogger } from '../fakes.js';

const corp: { name: string; mappingMethod: 'auto' | 'lookup'; groupPrefix: string } = {
  name: 'corp',
  mappingMethod: 'auto',
  groupPrefix: '',
};
const alice: UpstreamIdentity = {
  provider: 'corp',
  userId: 'uid=alice,ou=people,dc=kapi,dc=test',
  username: 'alice',
  email: 'alice@kapi.test',
  groups: ['devs', 'system:masters'],
};

async function mapped(users: InMemoryUserStore, identity = alice, provider = corp): Promise<UserRecord> {
  const result = await signInUpstream(identity, provider, users, capturingLogger().logger);
  if ('refused' in result) throw new Error(`refused: ${result.refused}`);
  return result.signedIn.user;
}

async function refusal(users: InMemoryUserStore, identity = alice, provider = corp): Promise<string> {
  const result = await signInUpstream(identity, provider, users, capturingLogger().logger);
  if (!('refused' in result)) throw new Error(`mapped to ${result.signedIn.user.name}`);
  return result.refused;
}

describe('signInUpstream', () => {
  it('when auto meets a new identity, then a linked User is created, and the next login finds that same User', async () => {
    const users = new InMemoryUserStore();
    const result = await signInUpstream(alice, corp, users, capturingLogger().logger);
    expect(result).toEqual({
      signedIn: { user: expect.objectContaining({ name: 'alice' }), provider: 'corp', upstreamGroups: ['devs'] },
    });
    expect(users.created).toHaveLength(1);
    expect(users.users.get('alice')!.link).toEqual({ provider: 'corp', userId: alice.userId, username: 'alice' });
    expect(users.users.get('alice')!.email).toBe('alice@kapi.test');
    expect((await mapped(users)).name).toBe('alice');
    expect(users.created).toHaveLength(1);
  });

  it('when a local User has the name, then it is never taken over: the identity gets a name of its own', async () => {
    const users = new InMemoryUserStore();
    users.add('alice', { password: 'local-Passw0rd' });
    const user = await mapped(users);
    expect(user.name).toMatch(/^alice-[0-9a-f]{8}$/);
    expect(users.users.get('alice')!.link).toBeUndefined();
  });

  it('when another provider’s User has the name, then it is not taken over either', async () => {
    const users = new InMemoryUserStore();
    users.add('alice', { link: { provider: 'other', userId: alice.userId } });
    expect((await mapped(users)).name).not.toBe('alice');
  });

  it('when another User has the upstream e-mail address, then the new User gets none (a shared address locks both out)', async () => {
    const users = new InMemoryUserStore();
    users.add('admin', { password: 'x-Passw0rd', email: 'alice@kapi.test' });
    expect((await mapped(users)).email).toBeUndefined();
  });

  it('when a User is linked to the identity under any name, then that User is the one', async () => {
    const users = new InMemoryUserStore();
    users.add('asmith', { link: { provider: 'corp', userId: alice.userId } });
    expect((await mapped(users)).name).toBe('asmith');
    expect(users.created).toEqual([]);
  });

  it('when lookup meets an identity no User is linked to, then the login is refused and nothing is created', async () => {
    const users = new InMemoryUserStore();
    users.add('alice', { password: 'local-Passw0rd' });
    expect(await refusal(users, alice, { ...corp, mappingMethod: 'lookup' })).toContain('no user linked');
    expect(users.created).toEqual([]);
  });

  it('when lookup meets a linked User, then it logs in', async () => {
    const users = new InMemoryUserStore();
    users.add('alice', { link: { provider: 'corp', userId: alice.userId } });
    expect((await mapped(users, alice, { ...corp, mappingMethod: 'lookup' })).name).toBe('alice');
  });

  it('when the linked User is Disabled, then the login is refused', async () => {
    const users = new InMemoryUserStore();
    users.add('alice', { link: { provider: 'corp', userId: alice.userId }, state: 'Disabled' });
    expect(await refusal(users)).toBe('user disabled');
  });

  it('when another replica creates the User first, then the create that lost finds it linked and uses it', async () => {
    const users = new InMemoryUserStore();
    const realGet = users.get.bind(users);
    let first = true;
    // the first read says "nobody"; meanwhile another replica creates the User under the same name
    users.get = async (name) => {
      if (first) {
        first = false;
        users.add('alice', { link: { provider: 'corp', userId: alice.userId, username: 'alice' } });
        return undefined;
      }
      return realGet(name);
    };
    expect((await mapped(users)).name).toBe('alice');
    expect(users.created).toEqual([]);
  });

  it('when a provider prefixes groups, then the session keeps prefixed groups without system ones', async () => {
    const users = new InMemoryUserStore();
    const result = await signInUpstream(alice, { ...corp, groupPrefix: 'corp:' }, users, capturingLogger().logger);
    expect('signedIn' in result && result.signedIn.upstreamGroups).toEqual(['corp:devs']);
  });
});
