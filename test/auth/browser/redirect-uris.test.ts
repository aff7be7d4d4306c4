import { formActionSource, isRegisteredRedirect, redirectWith } from '../../../src/auth/browser/redirect-uris.js';

const REGISTERED = [
  'https://console.example.com/oauth/callback',
  'https://app.example.com/cb?tenant=a%20b',
  'http://127.0.0.1/callback',
  'http://[::1]/callback',
  'http://localhost:8000/callback',
  'com.example.app:/oauth2redirect',
];

describe('isRegisteredRedirect', () => {
  test.each([
    ['the registered URI itself', 'https://console.example.com/oauth/callback'],
    ['a registered URI with its query as written', 'https://app.example.com/cb?tenant=a%20b'],
    ['a loopback IPv4 redirect on a port the app chose (RFC 8252 §7.3)', 'http://127.0.0.1:51004/callback'],
    ['a loopback IPv6 redirect on a port the app chose', 'http://[::1]:61023/callback'],
    ['a loopback redirect without a port', 'http://127.0.0.1/callback'],
    ['localhost on its registered port', 'http://localhost:8000/callback'],
    ['a private-use scheme', 'com.example.app:/oauth2redirect'],
  ])('when the request names %s, then it matches', (_case, uri) => {
    expect(isRegisteredRedirect(uri, REGISTERED)).toBe(true);
  });

  test.each([
    ['userinfo in front of another host', 'https://console.example.com@evil.example/oauth/callback'],
    ['the registered host as userinfo of a loopback port', 'http://127.0.0.1:8080@evil.example/callback'],
    ['path traversal after the registered path', 'https://console.example.com/oauth/callback/../../evil'],
    ['an encoded path traversal', 'https://console.example.com/oauth/callback/%2e%2e/evil'],
    ['a longer path (prefix match)', 'https://console.example.com/oauth/callback/extra'],
    ['a fragment', 'https://console.example.com/oauth/callback#x'],
    ['an added query', 'https://console.example.com/oauth/callback?next=https://evil.example'],
    ['another query value', 'https://app.example.com/cb?tenant=b'],
    ['another case in the host', 'https://Console.example.com/oauth/callback'],
    ['another case in the path', 'https://console.example.com/OAuth/callback'],
    ['http instead of https', 'http://console.example.com/oauth/callback'],
    ['a port on an https URI', 'https://console.example.com:8443/oauth/callback'],
    ['a subdomain of the host', 'https://evil.console.example.com/oauth/callback'],
    ['the host as a prefix of another', 'https://console.example.com.evil.example/oauth/callback'],
    ['a backslash trick', 'https://console.example.com\\@evil.example/oauth/callback'],
    ['another loopback path', 'http://127.0.0.1:51004/other'],
    ['a loopback path with traversal', 'http://127.0.0.1:51004/callback/../x'],
    ['a loopback port out of range', 'http://127.0.0.1:70000/callback'],
    ['a loopback port with a leading zero', 'http://127.0.0.1:08080/callback'],
    ['port 0', 'http://127.0.0.1:0/callback'],
    ['localhost on another port (only IP literals may vary)', 'http://localhost:9000/callback'],
    ['another loopback address', 'http://127.0.0.2:51004/callback'],
    ['IPv4 where IPv6 is registered only with the other path', 'http://[::1]:5000/cb'],
    ['a loopback URI over https', 'https://127.0.0.1:51004/callback'],
    ['a private-use scheme with a host', 'com.example.app://evil/oauth2redirect'],
    ['trailing whitespace', 'https://console.example.com/oauth/callback '],
    ['nothing', ''],
  ])('when the request names %s, then it does not match', (_case, uri) => {
    expect(isRegisteredRedirect(uri, REGISTERED)).toBe(false);
  });
});

describe('redirectWith', () => {
  test.each([
    ['https://a.example/cb', { code: 'c', state: 's' }, 'https://a.example/cb?code=c&state=s'],
    ['https://a.example/cb?tenant=a%20b', { code: 'c' }, 'https://a.example/cb?tenant=a%20b&code=c'],
    ['https://a.example/cb?', { code: 'c' }, 'https://a.example/cb?code=c'],
    ['https://a.example/cb', { code: 'c', state: undefined }, 'https://a.example/cb?code=c'],
    ['https://a.example/cb', { state: 'a&b=c d' }, 'https://a.example/cb?state=a%26b%3Dc+d'],
    ['com.example.app:/cb', { error: 'access_denied' }, 'com.example.app:/cb?error=access_denied'],
  ])('when %s gets %j, then the URI is %s (the registered query kept as written)', (uri, params, expected) => {
    expect(redirectWith(uri, params)).toBe(expected);
  });
});

describe('formActionSource', () => {
  test.each([
    ['https://console.example.com/oauth/callback', 'https://console.example.com'],
    ['http://127.0.0.1:51004/callback', 'http://127.0.0.1:51004'],
    ['com.example.app:/cb', 'com.example.app:'],
  ])('when the redirect URI is %s, then the CSP source is %s', (uri, source) => {
    expect(formActionSource(uri)).toBe(source);
  });
});
