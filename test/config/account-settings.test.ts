import { parseClusterConfiguration, type AuthSettings } from '../../src/config/cluster-configuration.js';

function parsed(authentication: unknown): { settings: AuthSettings } | { error: string } {
  return parseClusterConfiguration({ spec: { authentication } }, () => undefined);
}

describe('passwordPolicy and loginRecords', () => {
  it('when neither is given, then the defaults apply: 8 characters, records kept 7 days and 100 per user', () => {
    const result = parsed({});
    expect('settings' in result && result.settings.passwordPolicy).toEqual({ minLength: 8 });
    expect('settings' in result && result.settings.loginRecords).toEqual({
      enabled: true,
      maxAgeSeconds: 604_800,
      maxPerUser: 100,
    });
  });

  it('when both are given, then each field is read', () => {
    const result = parsed({
      passwordPolicy: { minLength: 12 },
      loginRecords: { enabled: false, maxAge: '24h', maxPerUser: 10 },
    });
    expect('settings' in result && result.settings.passwordPolicy).toEqual({ minLength: 12 });
    expect('settings' in result && result.settings.loginRecords).toEqual({
      enabled: false,
      maxAgeSeconds: 86_400,
      maxPerUser: 10,
    });
  });

  it.each([
    [{ passwordPolicy: { minLength: 0 } }, 'passwordPolicy.minLength: must be a whole number from 1 to 72, not 0'],
    [{ passwordPolicy: { minLength: 73 } }, 'passwordPolicy.minLength: must be a whole number from 1 to 72, not 73'],
    [{ passwordPolicy: 'strict' }, 'passwordPolicy: must be an object'],
    [{ loginRecords: { enabled: 'yes' } }, 'loginRecords.enabled: must be true or false'],
    [{ loginRecords: { maxAge: '7d' } }, 'loginRecords.maxAge: "7d"'],
    [{ loginRecords: { maxAge: '30s' } }, 'loginRecords.maxAge: must be from 1m to 8784h'],
    [{ loginRecords: { maxPerUser: 1001 } }, 'loginRecords.maxPerUser: must be a whole number from 1 to 1000'],
  ])('when %j is given, then the configuration is refused: %s', (authentication, message) => {
    const result = parsed(authentication);
    expect('error' in result && result.error).toContain(message);
  });
});
