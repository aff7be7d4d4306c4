import { createHash, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mkdtemp } from 'node:fs/promises';
import { Attribute, Change, Client } from 'ldapts';
import { escapeDnValue } from '../../config/identity-providers/ldap-syntax.js';
import { startSlapd, type Slapd } from './slapd.js';

/**
 * A directory to log in against: a real slapd (./slapd.ts) with the layout most organizations have — people under
 * ou=people, groups (groupOfNames, with the memberOf overlay) under ou=groups, and a read-only service account
 * kapi binds as to search. Entries are added over LDAP as the root DN, so the overlays see them as in production.
 */
export interface Directory {
  readonly slapd: Slapd;
  readonly suffix: string;
  readonly peopleDN: string;
  readonly groupsDN: string;
  readonly serviceDN: string;
  readonly servicePassword: string;
  /** Adds an inetOrgPerson; answers its DN (the value escaped as RFC 4514 asks). */
  addUser(user: DirectoryUser): Promise<string>;
  /** Adds a groupOfNames with these member DNs (at least one: the schema requires it). */
  addGroup(name: string, memberDNs: readonly string[]): Promise<string>;
  addMember(groupDN: string, memberDN: string): Promise<void>;
  removeMember(groupDN: string, memberDN: string): Promise<void>;
  delete(dn: string): Promise<void>;
  /** The `ldap` block of an identity provider for this directory; Secrets named as given. */
  providerSettings(
    secrets: { bindPassword: string; ca?: string },
    transport?: 'ldaps' | 'startTLS' | 'plain',
  ): Record<string, unknown>;
  stop(options?: { remove?: boolean }): Promise<void>;
}

export interface DirectoryUser {
  uid: string;
  password: string;
  mail?: string;
  cn?: string;
}

export interface DirectoryOptions {
  /** Default: a new directory under the system's temporary directory. */
  dir?: string;
  suffix?: string;
}

export async function startDirectory(options: DirectoryOptions = {}): Promise<Directory> {
  const suffix = options.suffix ?? 'dc=kapi,dc=test';
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'kapi-slapd-')));
  const rootPassword = randomBytes(18).toString('base64url');
  const slapd = await startSlapd({ dir, suffix, rootPassword });
  const servicePassword = randomBytes(18).toString('base64url');
  const serviceDN = `cn=kapi-reader,${suffix}`;
  const peopleDN = `ou=people,${suffix}`;
  const groupsDN = `ou=groups,${suffix}`;

  const admin = async <T>(work: (client: Client) => Promise<T>): Promise<T> => {
    const client = new Client({ url: slapd.ldapUrl, timeout: 10_000, connectTimeout: 10_000 });
    try {
      await client.bind(slapd.rootDN, slapd.rootPassword);
      return await work(client);
    } finally {
      await client.unbind().catch(() => {});
    }
  };

  try {
    await admin(async (client) => {
      const dc = /^dc=([^,]+)/.exec(suffix)?.[1] ?? 'kapi';
      await client.add(suffix, { objectClass: ['top', 'dcObject', 'organization'], dc, o: 'kapi test directory' });
      await client.add(peopleDN, { objectClass: ['top', 'organizationalUnit'], ou: 'people' });
      await client.add(groupsDN, { objectClass: ['top', 'organizationalUnit'], ou: 'groups' });
      await client.add(serviceDN, {
        objectClass: ['top', 'organizationalRole', 'simpleSecurityObject'],
        cn: 'kapi-reader',
        userPassword: ssha(servicePassword),
      });
    });
  } catch (error) {
    await slapd.stop({ remove: !options.dir });
    throw error;
  }

  return {
    slapd,
    suffix,
    peopleDN,
    groupsDN,
    serviceDN,
    servicePassword,
    addUser: (user) =>
      admin(async (client) => {
        const dn = `uid=${escapeDnValue(user.uid)},${peopleDN}`;
        const attributes: Record<string, string | string[]> = {
          objectClass: ['top', 'person', 'organizationalPerson', 'inetOrgPerson'],
          uid: user.uid,
          cn: user.cn ?? user.uid,
          sn: user.cn ?? user.uid,
          userPassword: ssha(user.password),
        };
        if (user.mail) attributes.mail = user.mail;
        await client.add(dn, attributes);
        return dn;
      }),
    addGroup: (name, memberDNs) =>
      admin(async (client) => {
        const dn = `cn=${escapeDnValue(name)},${groupsDN}`;
        await client.add(dn, { objectClass: ['top', 'groupOfNames'], cn: name, member: [...memberDNs] });
        return dn;
      }),
    addMember: (groupDN, memberDN) =>
      admin((client) =>
        client.modify(
          groupDN,
          new Change({ operation: 'add', modification: new Attribute({ type: 'member', values: [memberDN] }) }),
        ),
      ),
    removeMember: (groupDN, memberDN) =>
      admin((client) =>
        client.modify(
          groupDN,
          new Change({ operation: 'delete', modification: new Attribute({ type: 'member', values: [memberDN] }) }),
        ),
      ),
    delete: (dn) => admin((client) => client.del(dn)),
    providerSettings: (secrets, transport = 'ldaps') => ({
      ...(transport === 'ldaps'
        ? { url: slapd.ldapsUrl }
        : transport === 'startTLS'
          ? { url: slapd.ldapUrl, startTLS: true }
          : { url: slapd.ldapUrl, insecureNoTLS: true }),
      ...(transport !== 'plain' && secrets.ca ? { caSecretRef: { name: secrets.ca, key: 'ca.crt' } } : {}),
      bindDN: serviceDN,
      bindPasswordSecretRef: { name: secrets.bindPassword, key: 'password' },
      userSearch: {
        baseDN: peopleDN,
        filter: '(objectClass=inetOrgPerson)',
        loginAttribute: 'uid',
        mailAttribute: 'mail',
      },
      groupSearch: {
        baseDN: groupsDN,
        filter: '(objectClass=groupOfNames)',
        memberAttribute: 'member',
        nameAttribute: 'cn',
      },
    }),
    stop: (stopOptions) => slapd.stop({ remove: stopOptions?.remove ?? !options.dir }),
  };
}

/** RFC 2307 `{SSHA}`: a salted SHA-1 slapd checks binds against (the password itself is never stored). */
export function ssha(password: string): string {
  const salt = randomBytes(8);
  const digest = createHash('sha1').update(password, 'utf8').update(salt).digest();
  return `{SSHA}${Buffer.concat([digest, salt]).toString('base64')}`;
}
