import {
  execCredential,
  expiresAtOf,
  needsRefresh,
  parseExecInfo,
  plausibleTimes,
} from '../../../src/cli/kubectl-kapi/exec-credential.js';

describe('parseExecInfo', () => {
  const ca = '-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n';
  test.each([
    { name: 'nothing (not run by kubectl)', text: undefined, expected: undefined },
    {
      name: 'interactive true with the cluster (provideClusterInfo)',
      text: JSON.stringify({
        apiVersion: 'client.authentication.k8s.io/v1',
        kind: 'ExecCredential',
        spec: {
          interactive: true,
          cluster: { server: 'https://kapi:9443', 'certificate-authority-data': Buffer.from(ca).toString('base64') },
        },
      }),
      expected: { interactive: true, server: 'https://kapi:9443', caPem: ca },
    },
    {
      name: 'interactive false, no cluster',
      text: JSON.stringify({ kind: 'ExecCredential', spec: { interactive: false } }),
      expected: { interactive: false, server: undefined, caPem: undefined },
    },
    {
      name: 'no spec at all',
      text: '{}',
      expected: { interactive: false, server: undefined, caPem: undefined },
    },
  ])('when KUBERNETES_EXEC_INFO holds $name, then it is read as such', ({ text, expected }) => {
    expect(parseExecInfo(text)).toEqual(expected);
  });

  test('when KUBERNETES_EXEC_INFO is not JSON, then it is an error that says so', () => {
    expect(() => parseExecInfo('{')).toThrow('KUBERNETES_EXEC_INFO is not JSON');
  });
});

describe('execCredential', () => {
  test('when a token is printed, then it is a v1 ExecCredential with an RFC 3339 expiry in whole seconds', () => {
    expect(JSON.parse(execCredential('tok', Date.UTC(2026, 10, 24, 3, 0, 0, 500)))).toEqual({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: 'tok', expirationTimestamp: '2026-11-24T03:00:00Z' },
    });
  });
});

describe('needsRefresh', () => {
  const HOUR = 3_600_000;
  test.each([
    { name: 'a fresh 2 h token', obtainedAt: 0, expiresAt: 2 * HOUR, now: 0, refresh: false },
    {
      name: 'a 2 h token 61 s before expiry',
      obtainedAt: 0,
      expiresAt: 2 * HOUR,
      now: 2 * HOUR - 61_000,
      refresh: false,
    },
    {
      name: 'a 2 h token 60 s before expiry',
      obtainedAt: 0,
      expiresAt: 2 * HOUR,
      now: 2 * HOUR - 60_000,
      refresh: true,
    },
    { name: 'an expired token', obtainedAt: 0, expiresAt: 1000, now: 5000, refresh: true },
    { name: 'a 4 s token at half its life', obtainedAt: 0, expiresAt: 4000, now: 2000, refresh: false },
    { name: 'a 4 s token in its last quarter', obtainedAt: 0, expiresAt: 4000, now: 3000, refresh: true },
    { name: 'a token whose dates are swapped', obtainedAt: 5000, expiresAt: 1000, now: 0, refresh: false },
  ])('when the cache holds $name, then refresh is $refresh', ({ obtainedAt, expiresAt, now, refresh }) => {
    expect(needsRefresh({ obtainedAt, expiresAt }, now)).toBe(refresh);
  });
});

describe('expiresAtOf', () => {
  const T = 1_800_000_000_000;
  test.each([
    { name: '7200 s', expiresIn: 7200, expected: T + 7_200_000 },
    { name: 'a year', expiresIn: 366 * 86_400, expected: T + 366 * 86_400_000 },
    { name: '1e300', expiresIn: 1e300, expected: T },
    { name: 'more than a year', expiresIn: 366 * 86_400 + 1, expected: T },
    { name: '0', expiresIn: 0, expected: T },
    { name: 'a negative number', expiresIn: -5, expected: T },
    { name: 'a fraction', expiresIn: 1.5, expected: T },
    { name: 'NaN', expiresIn: Number.NaN, expected: T },
    { name: 'Infinity', expiresIn: Number.POSITIVE_INFINITY, expected: T },
    { name: 'text', expiresIn: '7200', expected: T },
  ])(
    'when expires_in is $name, then the token expires at $expected (bad: already expired)',
    ({ expiresIn, expected }) => {
      expect(expiresAtOf(T, expiresIn)).toBe(expected);
    },
  );
});

describe('plausibleTimes', () => {
  const NOW = 1_800_000_000_000;
  test.each([
    {
      name: 'a token obtained an hour ago for two hours',
      obtainedAt: NOW - 3_600_000,
      expiresAt: NOW + 3_600_000,
      ok: true,
    },
    { name: 'an expired one', obtainedAt: NOW - 10_000_000, expiresAt: NOW - 2_800_000, ok: true },
    { name: 'expiresAt 1e20', obtainedAt: NOW, expiresAt: 1e20, ok: false },
    { name: 'expiresAt before obtainedAt', obtainedAt: NOW, expiresAt: NOW - 1, ok: false },
    {
      name: 'obtained two days in the future',
      obtainedAt: NOW + 2 * 86_400_000,
      expiresAt: NOW + 2 * 86_400_000 + 1,
      ok: false,
    },
    { name: 'a lifetime over a year', obtainedAt: NOW, expiresAt: NOW + 367 * 86_400_000, ok: false },
    { name: 'NaN', obtainedAt: Number.NaN, expiresAt: NOW, ok: false },
    { name: 'strings', obtainedAt: String(NOW), expiresAt: String(NOW), ok: false },
    { name: 'a negative time', obtainedAt: -1, expiresAt: NOW, ok: false },
  ])('when the cache holds $name, then the times are believed: $ok', ({ obtainedAt, expiresAt, ok }) => {
    expect(plausibleTimes({ obtainedAt, expiresAt }, NOW)).toBe(ok);
  });
});

describe('execCredential with a time no Date holds', () => {
  test.each([1e20, Number.NaN, Number.POSITIVE_INFINITY])(
    'when the expiry is %s, then it is printed as past, never thrown',
    (at) => {
      expect(JSON.parse(execCredential('tok', at)).status.expirationTimestamp).toBe('1970-01-01T00:00:00Z');
    },
  );
});
