import { parseClusterConfiguration } from '../../../src/config/cluster-configuration.js';
import type { OidcProviderSettings } from '../../../src/config/identity-providers/index.js';

const secrets: Record<string, Record<string, string>> = {
  keycloak: { secret: 'kc-client-s3cret' },
};
const lookup = (name: string) => secrets[name];

function withOidc(oidc: Record<string, unknown>, common: Record<string, unknown> = {}) {
  return {
    spec: {
      authentication: {
        identityProviders: [{ name: 'keycloak', type: 'OIDC', mappingMethod: 'auto', ...common, oidc }],
      },
    },
  };
}

function read(oidc: Record<string, unknown>): OidcProviderSettings {
  const result = parseClusterConfiguration(withOidc(oidc), lookup);
  if ('error' in result) throw new Error(result.error);
  return result.settings.identityProviders[0] as OidcProviderSettings;
}

function problemsOf(oidc: Record<string, unknown>): string {
  const result = parseClusterConfiguration(withOidc(oidc), lookup);
  if (!('error' in result)) throw new Error('accepted');
  return result.error;
}

const BASE = { issuer: 'https://keycloak.example.com/realms/kapi', clientID: 'kapi' };
const P = 'spec.authentication.identityProviders[0].oidc';

describe('an OIDC identity provider', () => {
  test('when only issuer and clientID are given, then the defaults apply', () => {
    expect(read(BASE)).toMatchObject({
      name: 'keycloak',
      type: 'OIDC',
      oidc: {
        issuer: BASE.issuer,
        clientID: 'kapi',
        scopes: ['openid', 'profile', 'email'],
        usernameClaim: 'preferred_username',
        emailClaim: 'email',
        timeoutSeconds: 10,
      },
    });
  });

  test('when every field is given, then each is read, the secret from its Secret, openid always first', () => {
    expect(
      read({
        ...BASE,
        clientSecretRef: { name: 'keycloak', key: 'secret' },
        redirectURL: 'https://kapi.example.com/oauth/callback/keycloak',
        scopes: ['groups', 'profile'],
        usernameClaim: 'email',
        emailClaim: 'mail',
        groupsClaim: 'groups',
        displayName: 'Company SSO',
        timeout: '3s',
      }).oidc,
    ).toEqual({
      issuer: BASE.issuer,
      clientID: 'kapi',
      clientSecret: 'kc-client-s3cret',
      redirectURL: 'https://kapi.example.com/oauth/callback/keycloak',
      scopes: ['openid', 'groups', 'profile'],
      usernameClaim: 'email',
      emailClaim: 'mail',
      groupsClaim: 'groups',
      displayName: 'Company SSO',
      timeoutSeconds: 3,
    });
  });

  test('when the redirect URL is on loopback over http (a laptop), then it is accepted', () => {
    expect(read({ ...BASE, redirectURL: 'http://127.0.0.1:9090/oauth/callback/keycloak' }).oidc.redirectURL).toBe(
      'http://127.0.0.1:9090/oauth/callback/keycloak',
    );
  });

  test.each([
    ['no issuer', { clientID: 'kapi' }, `${P}.issuer: is required (an https URL)`],
    ['an http issuer', { ...BASE, issuer: 'http://keycloak.example.com' }, 'must be an https URL'],
    [
      'an issuer with a query',
      { ...BASE, issuer: 'https://k.example.com/?x=1' },
      'must have no user, query or fragment',
    ],
    ['no clientID', { issuer: BASE.issuer }, `${P}.clientID: is required`],
    ['an inline secret', { ...BASE, clientSecret: 'x' }, `${P}.clientSecret: secrets are read from a Secret only`],
    ['a missing Secret', { ...BASE, clientSecretRef: { name: 'nope', key: 'x' } }, 'Secret "nope" not found'],
    [
      'a redirect URL that is not kapi’s callback',
      { ...BASE, redirectURL: 'https://kapi.example.com/elsewhere' },
      `${P}.redirectURL: must end with /oauth/callback/<provider name>`,
    ],
    [
      'an http redirect URL off loopback',
      { ...BASE, redirectURL: 'http://kapi.example.com/oauth/callback/k' },
      'https',
    ],
    ['a scope with a space', { ...BASE, scopes: ['a b'] }, `${P}.scopes[0]: "a b" is not a scope`],
    [
      'a claim name with a space',
      { ...BASE, groupsClaim: 'my groups' },
      `${P}.groupsClaim: "my groups" is not a claim`,
    ],
    ['a timeout of 2 minutes', { ...BASE, timeout: '2m' }, 'must be from 100ms to 60s'],
    ['a CA bundle without a certificate', { ...BASE, caSecretRef: { name: 'keycloak', key: 'secret' } }, 'no PEM'],
  ])('when the block has %s, then the configuration is refused naming it', (_case, oidc, message) => {
    expect(problemsOf(oidc)).toContain(message);
  });

  test('when the secret is wrong, then no message quotes it', () => {
    secrets.bad = { secret: ' padded-s3cret ' };
    expect(problemsOf({ ...BASE, clientSecretRef: { name: 'bad', key: 'secret' } })).not.toContain('padded-s3cret');
  });
});
