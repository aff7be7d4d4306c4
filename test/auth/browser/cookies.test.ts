import { describe, expect, it } from '@jest/globals';
import { clearCookie, cookieName, cookieValue, setCookie } from '../../../src/auth/browser/cookies.js';

describe('browser cookies', () => {
  it.each([
    [true, '__Host-kapi_session=v; Path=/; HttpOnly; SameSite=Lax; Max-Age=60; Secure'],
    [false, 'kapi_session=v; Path=/oauth; HttpOnly; SameSite=Lax; Max-Age=60'],
  ])('when set with secure %s, then it is %s', (secure, expected) => {
    expect(setCookie('kapi_session', 'v', { secure, maxAge: 60 })).toBe(expected);
  });

  it('when cleared over TLS, then the __Host- cookie is the one cleared', () => {
    expect(clearCookie('kapi_session', { secure: true })).toBe(
      '__Host-kapi_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure',
    );
  });

  it('when read over TLS, then only the __Host- cookie counts: a bare one a sibling host or plain HTTP set is not read', () => {
    expect(cookieName('kapi_login', true)).toBe('__Host-kapi_login');
    expect(cookieValue('kapi_login=planted', 'kapi_login', true)).toBeUndefined();
    expect(cookieValue('kapi_login=planted; __Host-kapi_login=real', 'kapi_login', true)).toBe('real');
    expect(cookieValue('__Host-kapi_login=real', 'kapi_login', false)).toBeUndefined();
    expect(cookieValue('kapi_login=plain', 'kapi_login', false)).toBe('plain');
  });

  it('when a name comes twice, then neither is trusted', () => {
    expect(cookieValue('__Host-kapi_session=a; __Host-kapi_session=b', 'kapi_session', true)).toBeUndefined();
  });
});
