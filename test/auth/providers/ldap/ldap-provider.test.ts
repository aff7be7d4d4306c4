/**
 * The LDAP provider against a real OpenLDAP (Debian's slapd, started on loopback with a generated configuration and
 * CA): StartTLS and ldaps:// with the certificate always verified, searches with escaped values, binds as the user,
 * groups by search and by memberOf, a bounded pool, and a directory that stops answering or goes away.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LdapProvider } from '../../../../src/auth/providers/ldap/ldap-provider.js';
import { ProviderUnavailable } from '../../../../src/auth/providers/identity-provider.js';
import { parseClusterConfiguration } from '../../../../src/config/cluster-configuration.js';
import type { LdapProviderSettings } from '../../../../src/config/identity-providers/index.js';
import { parseDn } from '../../../../src/config/identity-providers/ldap-syntax.js';
import { startDirectory, type Directory } from '../../../../src/sandbox/directory/directory.js';
import { createLogger } from '../../../../src/observability/logger.js';

const logger = createLogger('error', { silent: true });
const PASSWORD = 'Alice-Dir3ctory-pw';
/** Login names an attacker would try, each of which must match nobody (SPEC §14: no injection). */
const HOSTILE = [
  '*',
  'al*',
  '*)(uid=*',
  'alice)(|(uid=*',
  'alice)(objectClass=*',
  '\\2a',
  '\\',
  'alice\u0000',
  '\u0000',
  '(',
  'x'.repeat(10_000),
];

let directory: Directory;
let aliceDN: string;
let devsDN: string;
let otherCa: string;
const providers: LdapProvider[] = [];

function provider(
  ldap: Record<string, unknown> = {},
  transport: 'ldaps' | 'startTLS' | 'plain' = 'ldaps',
  secrets: Record<string, Record<string, string>> = {},
  from: Directory = directory,
): LdapProvider {
  const directory = from;
  const lookup = (name: string) =>
    secrets[name] ??
    (name === 'bind'
      ? { password: directory.servicePassword }
      : name === 'ca'
        ? { 'ca.crt': directory.slapd.caPem }
        : undefined);
  const parsed = parseClusterConfiguration(
    {
      spec: {
        authentication: {
          identityProviders: [
            {
              name: 'corp',
              type: 'LDAP',
              mappingMethod: 'auto',
              ldap: { ...directory.providerSettings({ bindPassword: 'bind', ca: 'ca' }, transport), ...ldap },
            },
          ],
        },
      },
    },
    lookup,
  );
  if ('error' in parsed) throw new Error(parsed.error);
  const made = new LdapProvider(parsed.settings.identityProviders[0] as LdapProviderSettings, logger);
  providers.push(made);
  return made;
}

beforeAll(async () => {
  directory = await startDirectory();
  aliceDN = await directory.addUser({ uid: 'alice', password: PASSWORD, mail: 'alice@kapi.test', cn: 'Alice Smith' });
  devsDN = await directory.addGroup('devs', [aliceDN]);
  await directory.addGroup('ops', [aliceDN]);
  const bob = await directory.addUser({ uid: 'bob', password: 'Bob-pw-1' });
  await directory.addGroup('bob-only', [bob]);
  // a CA that signed nothing of this directory: another directory's
  const other = await startDirectory();
  otherCa = other.slapd.caPem;
  await other.stop();
}, 60_000);

afterAll(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await directory?.stop();
});

describe('LdapProvider against slapd', () => {
  it.each(['ldaps', 'startTLS'] as const)(
    'when a user logs in over %s, then the identity has the DN as id, the mail and the groups',
    async (transport) => {
      const result = await provider({}, transport).login('alice', PASSWORD);
      expect(result).toEqual({
        identity: {
          provider: 'corp',
          userId: aliceDN,
          username: 'alice',
          email: 'alice@kapi.test',
          groups: expect.arrayContaining(['devs', 'ops']),
        },
      });
      expect('identity' in result && result.identity.groups).toHaveLength(2);
    },
  );

  it('when a user logs in by e-mail, then the mail attribute finds them', async () => {
    const result = await provider().login('alice@kapi.test', PASSWORD);
    expect('identity' in result && result.identity.userId).toBe(aliceDN);
  });

  it('when groups come from memberOf alone, then the leftmost RDN of each group DN is its name', async () => {
    const result = await provider({ groupSearch: undefined, memberOfAttribute: 'memberOf' }).login('alice', PASSWORD);
    expect('identity' in result && [...result.identity.groups].sort()).toEqual(['devs', 'ops']);
  });

  it('when the password is wrong, then it says so; when nobody has the login, it says that', async () => {
    const ldap = provider();
    expect(await ldap.login('alice', 'wrong')).toEqual({ wrongPassword: true });
    expect(await ldap.login('nobody', PASSWORD)).toEqual({ unknownUser: true });
    // another user's password is no password of alice's
    expect(await ldap.login('alice', 'Bob-pw-1')).toEqual({ wrongPassword: true });
  });

  it('when the password is empty, then no bind is made (an LDAP bind without a password is anonymous and succeeds)', async () => {
    expect(await provider().login('alice', '')).toEqual({ wrongPassword: true });
  });

  it.each(HOSTILE.map((login) => [login.length > 30 ? `${login.slice(0, 12)}… (${login.length})` : login, login]))(
    'when the login is %j, then it matches nobody',
    async (_label, login) => {
      expect(await provider().login(login, PASSWORD)).toEqual({ unknownUser: true });
    },
  );

  it('when a user’s name holds filter and DN metacharacters or unicode, then exactly that name logs in', async () => {
    const odd = 'o*(d)d\\ ,+"x';
    const oddDN = await directory.addUser({ uid: odd, password: 'Odd-pw-1' });
    await directory.addUser({ uid: 'jürgen', password: 'Jurgen-pw-1', mail: 'juergen@kapi.test' });
    const ldap = provider();
    const oddLogin = await ldap.login(odd, 'Odd-pw-1');
    if (!('identity' in oddLogin)) throw new Error(`${odd} did not log in`);
    // the directory writes the DN in its own escaping (\5C for \): the same DN, value for value
    expect(parseDn(oddLogin.identity.userId)).toEqual(parseDn(oddDN));
    expect(parseDn(oddDN)[0]).toEqual([{ type: 'uid', value: odd }]);
    expect(oddLogin.identity.username).toBe(odd);
    expect(await ldap.login('o*', 'Odd-pw-1')).toEqual({ unknownUser: true });
    expect(await ldap.login('jürgen', 'Jurgen-pw-1')).toEqual({
      identity: expect.objectContaining({ username: 'jürgen', email: 'juergen@kapi.test' }),
    });
  });

  it('when the directory’s certificate is not signed by the configured CA, then nothing is sent and it is unavailable', async () => {
    for (const transport of ['ldaps', 'startTLS'] as const) {
      const ldap = provider({}, transport, { ca: { 'ca.crt': otherCa } });
      await expect(ldap.login('alice', PASSWORD)).rejects.toThrow(ProviderUnavailable);
      await expect(ldap.login('alice', PASSWORD)).rejects.toThrow(/certificate/);
    }
  });

  it('when no CA is configured, then the system CAs are used and a private CA is refused', async () => {
    const ldap = provider({ caSecretRef: undefined });
    await expect(ldap.login('alice', PASSWORD)).rejects.toThrow(/certificate/);
  });

  it('when the host name does not match the certificate, then it is refused', async () => {
    // the certificate names 127.0.0.1 and localhost; ::1 / another name is not on it
    const ldap = provider({ url: `ldaps://127.0.0.2:${directory.slapd.tlsPort}` });
    await expect(ldap.login('alice', PASSWORD)).rejects.toThrow(ProviderUnavailable);
  });

  it('when the service account’s password is wrong, then the provider is unavailable, never a wrong user password', async () => {
    const ldap = provider({}, 'ldaps', { bind: { password: 'not-the-password' } });
    await expect(ldap.login('alice', PASSWORD)).rejects.toThrow(/service account's bind was refused/);
  });

  it('when many logins run at once, then no more than maxConnections connections are opened and all succeed', async () => {
    const ldap = provider({ maxConnections: 2 });
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, ldap.connections)), 1);
    const results = await Promise.all(Array.from({ length: 12 }, () => ldap.login('alice', PASSWORD)));
    clearInterval(watch);
    expect(results.every((r) => 'identity' in r)).toBe(true);
    expect(ldap.connections).toBeLessThanOrEqual(2);
    expect(most).toBeLessThanOrEqual(2);
  });

  it('when a user’s groups change, then a refresh reads them again; when the user is deleted, the refresh finds nobody', async () => {
    const carolDN = await directory.addUser({ uid: 'carol', password: 'Carol-pw-1' });
    await directory.addMember(devsDN, carolDN);
    const ldap = provider();
    const login = await ldap.login('carol', 'Carol-pw-1');
    if (!('identity' in login)) throw new Error('carol did not log in');
    expect(login.identity.groups).toEqual(['devs']);
    await directory.removeMember(devsDN, carolDN);
    const link = { provider: 'corp', userId: login.identity.userId, username: 'carol' };
    expect((await ldap.refresh(link))?.groups).toEqual([]);
    await directory.delete(carolDN);
    expect(await ldap.refresh(link)).toBeUndefined();
  });

  it('when the id is entryUUID, then logins and refreshes use it', async () => {
    const ldap = provider({
      userSearch: { baseDN: directory.peopleDN, loginAttribute: 'uid', idAttribute: 'entryUUID' },
    });
    const login = await ldap.login('alice', PASSWORD);
    if (!('identity' in login)) throw new Error('alice did not log in');
    expect(login.identity.userId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await ldap.refresh({ provider: 'corp', userId: login.identity.userId }))?.username).toBe('alice');
  });
});

describe('a directory that stops answering', () => {
  it('when slapd is paused, then logins fail as unavailable after the timeout; resumed, they work again', async () => {
    const local = await startDirectory();
    try {
      await local.addUser({ uid: 'dave', password: 'Dave-pw-1' });
      const ldap = provider({ timeout: '300ms', maxConnections: 2 }, 'ldaps', {}, local);
      expect('identity' in (await ldap.login('dave', 'Dave-pw-1'))).toBe(true);
      local.slapd.pause();
      const during = await Promise.allSettled([ldap.login('dave', 'Dave-pw-1'), ldap.login('dave', 'Dave-pw-1')]);
      // what each login came to (a failure names it)
      const outcome = (r: PromiseSettledResult<unknown>) =>
        r.status === 'rejected'
          ? r.reason instanceof ProviderUnavailable
            ? 'unavailable'
            : `rejected: ${String(r.reason)}`
          : `fulfilled: ${JSON.stringify(r.value)}`;
      expect(during.map(outcome)).toEqual(['unavailable', 'unavailable']);
      local.slapd.resume();
      expect('identity' in (await ldap.login('dave', 'Dave-pw-1'))).toBe(true);

      // stopped for good: connections are refused, each login is unavailable (never a wrong password)
      await local.slapd.stop();
      await expect(ldap.login('dave', 'Dave-pw-1')).rejects.toThrow(ProviderUnavailable);
      await expect(ldap.login('dave', 'wrong')).rejects.toThrow(ProviderUnavailable);
    } finally {
      await local.stop();
    }
  }, 30_000);
});
