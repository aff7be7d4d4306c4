/**
 * The password grant through identity providers (SPEC §14), over in-memory stores and fake directories: which
 * password counts, how directory users map to Users, how their groups reach the session and the tokens, and how
 * failures, limits and an unreachable directory are answered. The LDAP provider itself is proven against a real
 * slapd in test/auth/providers/ldap/.
 */
import { decodeJwt } from 'jose';
import { checkPassword } from '../../../src/auth/oauth/password-login.js';
import { LoginLimiter, canonicalLogin } from '../../../src/auth/users/login-limiter.js';
import { bcryptPasswords } from '../../../src/auth/users/passwords.js';
import { capturingLogger } from '../fakes.js';
import { FakeDirectory, fakeProviders, providerSettings } from '../providers/fake-directory.js';
import { client, login, refresh, testIdentity, tokenRequest, whoami } from '../identity-app.js';

const PASSWORD = 'Dir3ctory-Passw0rd';

function setup(options: { mappingMethod?: 'auto' | 'lookup'; groupPrefix?: string; second?: boolean } = {}) {
  const corp = new FakeDirectory(providerSettings('corp', options.mappingMethod, options.groupPrefix));
  corp.add('alice', { userId: 'uid=alice,dc=corp', password: PASSWORD, email: 'alice@corp.test', groups: ['devs'] });
  const directories = [corp];
  let other: FakeDirectory | undefined;
  if (options.second) {
    other = new FakeDirectory(providerSettings('other'));
    other.add('bob', { userId: 'uid=bob,dc=other', password: PASSWORD, groups: ['ops'] });
    directories.push(other);
  }
  const providers = fakeProviders(directories, capturingLogger().logger);
  const t = testIdentity({ providers });
  return { ...t, corp, other };
}

function passwordLogin(t: ReturnType<typeof setup>, username: string, password: string, ip = '192.0.2.1') {
  return tokenRequest(t.app, { grant_type: 'password', username, password, ...client }, ip);
}

describe('password grant through identity providers', () => {
  it('when a directory user logs in, then a linked User is created and the tokens, session and requests carry the directory groups', async () => {
    const t = setup();
    const tokens = await login(t.app, 'alice', PASSWORD);
    expect(t.users.users.get('alice')).toMatchObject({
      link: { provider: 'corp', userId: 'uid=alice,dc=corp' },
      email: 'alice@corp.test',
      passwordHash: undefined,
    });
    expect(decodeJwt(tokens.access_token).groups).toEqual(['devs']);
    const [session] = [...t.sessions.sessions.values()];
    expect(session).toMatchObject({ username: 'alice', identityProvider: 'corp', groups: ['devs'] });
    const me = await whoami(t.app, tokens.access_token);
    expect(me.body).toMatchObject({ username: 'alice', groups: ['devs', 'system:authenticated'] });
    expect(t.lines.join('\n')).toContain('"provider":"corp"');
  });

  it('when a directory user logs in by e-mail, then it is the same User', async () => {
    const t = setup();
    await login(t.app, 'alice', PASSWORD);
    await login(t.app, 'alice@corp.test', PASSWORD);
    expect(t.users.created).toHaveLength(1);
  });

  it('when the password is wrong or the login unknown everywhere, then it is the one invalid_grant', async () => {
    const t = setup();
    for (const [username, password] of [
      ['alice', 'wrong'],
      ['nobody', PASSWORD],
    ] as const) {
      const res = await passwordLogin(t, username, password);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_grant', error_description: 'invalid username or password' });
    }
    expect(t.corp.asked).toEqual(['alice', 'nobody']);
  });

  it('when the password is empty, then no directory is asked (an LDAP bind without one is anonymous and succeeds)', async () => {
    const t = setup();
    const deps = {
      users: t.users,
      passwords: bcryptPasswords,
      limiter: new LoginLimiter(t.users),
      settings: () => t.settings.current,
      clock: t.clock.read,
      logger: capturingLogger().logger,
      providers: fakeProviders([t.corp], capturingLogger().logger),
    };
    await expect(checkPassword(deps, { login: 'alice', password: '', sourceIp: '192.0.2.1' }, {})).rejects.toThrow(
      'invalid username or password',
    );
    expect(t.corp.asked).toEqual([]);
    // through the token endpoint too: the one invalid_grant, counted and recorded, and no directory asked
    await login(t.app, 'alice', PASSWORD);
    const res = await passwordLogin(t, 'alice', '');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
    expect(t.corp.asked).toEqual(['alice']);
    expect(t.users.users.get('alice')!.failedLogins).toHaveLength(1);
    expect((await t.records.read('alice')).map((r) => r.reason)).toContain('empty password');
  });

  it('when a login is longer than 1 KiB, then no directory is asked', async () => {
    const t = setup();
    const res = await passwordLogin(t, 'x'.repeat(10_000), PASSWORD);
    expect(res.status).toBe(400);
    expect(t.corp.asked).toEqual([]);
  });

  it('when wrong directory passwords reach the limit, then the user is refused with 429 like a local user', async () => {
    const t = setup();
    await login(t.app, 'alice', PASSWORD);
    // one failure per address, so only the user's own count can refuse
    for (let i = 1; i <= 3; i++) expect((await passwordLogin(t, 'alice', 'wrong', `10.0.0.${i}`)).status).toBe(400);
    const locked = await passwordLogin(t, 'alice', PASSWORD, '10.0.0.9');
    expect(locked.status).toBe(429);
    expect(t.users.users.get('alice')!.state).toBe('AuthLimitExceeded');
  });

  it('when wrong passwords come under variants of a directory name, then each counts towards the one User and its records', async () => {
    const t = setup();
    await login(t.app, 'alice', PASSWORD);
    // one address each, so only the User's count can refuse; a directory takes all three for 'alice'
    const variants = [' alice', 'ALICE  ', '\uff41\uff4c\uff49\uff43\uff45'];
    for (const [i, variant] of variants.entries()) {
      expect((await passwordLogin(t, variant, 'wrong', `10.0.1.${i}`)).status).toBe(400);
    }
    expect(t.users.users.get('alice')).toMatchObject({ state: 'AuthLimitExceeded' });
    expect(t.users.users.get('alice')!.failedLogins).toHaveLength(3);
    const records = await t.records.read('alice');
    expect(records.filter((r) => r.result === 'failure')).toHaveLength(3);
  });

  it('when the linked User is locked, then a variant of its name is refused 429 before the directory checks the password', async () => {
    const t = setup();
    await login(t.app, 'alice', PASSWORD);
    for (let i = 1; i <= 3; i++) expect((await passwordLogin(t, 'alice', 'wrong', `10.0.2.${i}`)).status).toBe(400);
    const checkedBefore = t.corp.checked.length;
    // right and wrong passwords get the same answer: the lock tells nothing about the password
    for (const [variant, password] of [
      [' alice', PASSWORD],
      ['Alice', 'wrong'],
    ] as const) {
      const res = await passwordLogin(t, variant, password, '10.0.2.9');
      expect(res.status).toBe(429);
      expect(res.body.error).toBe('invalid_grant');
    }
    expect(t.corp.checked).toHaveLength(checkedBefore);
  });

  it('when a login name is a variant of another, then both count against one per-name key', () => {
    const key = canonicalLogin('demo');
    for (const variant of [' demo', 'demo  ', 'DEMO', '\uff44\uff45\uff4d\uff4f', 'de\u200bmo', '\tdemo\n'])
      expect(canonicalLogin(variant)).toBe(key);
    expect(canonicalLogin('john  smith')).toBe('john smith');
    expect(canonicalLogin('demo2')).not.toBe(key);
  });

  it('when a directory login fails, then the answer costs a bcrypt check as a local failure does', async () => {
    const t = setup();
    const checks: string[] = [];
    const passwords = {
      verify: async (password: string, hash: string | undefined) => {
        checks.push(hash === undefined ? 'dummy' : 'hash');
        return bcryptPasswords.verify(password, hash);
      },
    };
    const deps = {
      users: t.users,
      passwords,
      limiter: new LoginLimiter(t.users),
      settings: () => t.settings.current,
      clock: t.clock.read,
      logger: capturingLogger().logger,
      providers: fakeProviders([t.corp], capturingLogger().logger),
    };
    for (const [login, password] of [
      ['nobody', PASSWORD],
      ['alice', 'wrong'],
      ['alice', ''],
    ] as const) {
      await expect(checkPassword(deps, { login, password, sourceIp: '192.0.2.7' }, {})).rejects.toThrow(
        'invalid username or password',
      );
    }
    expect(checks).toEqual(['dummy', 'dummy', 'dummy']);
    await checkPassword(deps, { login: 'alice', password: PASSWORD, sourceIp: '192.0.2.8' }, {});
    expect(checks).toHaveLength(3);
  });

  it('when the directory is down, then logins answer 503 RFC 6749 and never count as failures', async () => {
    const t = setup();
    await login(t.app, 'alice', PASSWORD);
    t.corp.down = true;
    for (let i = 0; i < 5; i++) {
      const res = await passwordLogin(t, 'alice', 'whatever');
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('temporarily_unavailable');
      expect(res.headers['retry-after']).toBe('1');
    }
    expect(t.users.users.get('alice')).toMatchObject({ state: 'Active', failedLogins: [] });
    t.corp.down = false;
    expect((await passwordLogin(t, 'alice', PASSWORD)).status).toBe(200);
  });

  it('when the first directory is down and the second knows the user, then the second logs them in', async () => {
    const t = setup({ second: true });
    t.corp.down = true;
    expect((await passwordLogin(t, 'bob', PASSWORD)).status).toBe(200);
    expect(t.users.users.get('bob')!.link?.provider).toBe('other');
  });

  it('when a local User has a password, then a directory account of the same name never logs in as it', async () => {
    const t = setup();
    t.users.add('alice', { password: 'Local-Passw0rd' });
    expect((await passwordLogin(t, 'alice', PASSWORD)).status).toBe(400);
    expect(t.corp.asked).toEqual([]);
    expect((await passwordLogin(t, 'alice', 'Local-Passw0rd')).status).toBe(200);
  });

  it('when a User is linked to a provider, then only that provider checks its password', async () => {
    const t = setup({ second: true });
    t.other!.add('alice', { userId: 'uid=alice,dc=other', password: 'Other-Passw0rd' });
    t.users.add('alice', { link: { provider: 'corp', userId: 'uid=alice,dc=corp' } });
    expect((await passwordLogin(t, 'alice', 'Other-Passw0rd')).status).toBe(400);
    expect(t.other!.asked).toEqual([]);
    expect((await passwordLogin(t, 'alice', PASSWORD)).status).toBe(200);
  });

  it('when lookup meets an unlinked directory user, then the login is refused; once linked, it works', async () => {
    const t = setup({ mappingMethod: 'lookup' });
    expect((await passwordLogin(t, 'alice', PASSWORD)).status).toBe(400);
    expect(t.users.users.size).toBe(0);
    t.users.add('a-smith', { link: { provider: 'corp', userId: 'uid=alice,dc=corp' } });
    const tokens = await login(t.app, 'alice', PASSWORD);
    expect(decodeJwt(tokens.access_token).username).toBe('a-smith');
  });

  it('when the linked User is disabled, then the directory login is refused', async () => {
    const t = setup();
    t.users.add('alice', { link: { provider: 'corp', userId: 'uid=alice,dc=corp' }, state: 'Disabled' });
    expect((await passwordLogin(t, 'alice', PASSWORD)).status).toBe(400);
  });

  it('when the directory prefixes groups and hands out system groups, then only prefixed ordinary groups are kept', async () => {
    const t = setup({ groupPrefix: 'corp:' });
    t.corp.accounts.get('alice')!.groups = ['devs', 'system:masters'];
    const tokens = await login(t.app, 'alice', PASSWORD);
    expect((await whoami(t.app, tokens.access_token)).body.groups).toEqual(['corp:devs', 'system:authenticated']);
  });

  it('when a directory user refreshes, then the groups are read again and follow the directory', async () => {
    const t = setup();
    const tokens = await login(t.app, 'alice', PASSWORD);
    t.corp.accounts.get('alice')!.groups = ['ops'];
    const refreshed = await refresh(t.app, tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    expect(t.corp.refreshes).toBe(1);
    expect(decodeJwt(refreshed.body.access_token).groups).toEqual(['ops']);
    expect((await whoami(t.app, refreshed.body.access_token)).body.groups).toEqual(['ops', 'system:authenticated']);
  });

  it('when the directory is down at a refresh, then 503 and the session stands', async () => {
    const t = setup();
    const tokens = await login(t.app, 'alice', PASSWORD);
    t.corp.down = true;
    const res = await refresh(t.app, tokens.refresh_token);
    expect(res.status).toBe(503);
    t.corp.down = false;
    expect((await refresh(t.app, tokens.refresh_token)).status).toBe(200);
  });

  it('when the directory no longer knows the user, then the refresh is refused and the session ends', async () => {
    const t = setup();
    const tokens = await login(t.app, 'alice', PASSWORD);
    t.corp.accounts.delete('alice');
    const res = await refresh(t.app, tokens.refresh_token);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
    expect(t.sessions.sessions.size).toBe(0);
    expect((await whoami(t.app, tokens.access_token)).status).toBe(401);
  });

  it('when a local user refreshes, then no directory is asked', async () => {
    const t = setup();
    t.users.add('carol', { password: 'Local-Passw0rd', groups: ['admins'] });
    const tokens = await login(t.app, 'carol', 'Local-Passw0rd');
    expect((await refresh(t.app, tokens.refresh_token)).status).toBe(200);
    expect(t.corp.refreshes).toBe(0);
    expect(t.corp.asked).toEqual([]);
  });
});
