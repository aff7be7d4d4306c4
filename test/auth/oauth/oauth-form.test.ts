import { OAuthError } from '../../../src/auth/oauth/oauth-error.js';
import {
  isFormContentType,
  param,
  parseBasicCredentials,
  parseForm,
  requiredParam,
} from '../../../src/auth/oauth/oauth-form.js';

const basic = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

function oauthError(fn: () => unknown): OAuthError {
  try {
    fn();
  } catch (err) {
    if (err instanceof OAuthError) return err;
    throw err;
  }
  throw new Error('expected an OAuthError');
}

describe('parseForm', () => {
  const ok: Array<[string, string, Record<string, string>]> = [
    [
      'when the body is a plain form, then every pair is read',
      'grant_type=password&username=alice',
      { grant_type: 'password', username: 'alice' },
    ],
    [
      'when values are percent-encoded and use +, then they are decoded',
      'password=p%40ss+word%26%3D',
      { password: 'p@ss word&=' },
    ],
    ['when the body is empty, then there are no parameters', '', {}],
    ['when a parameter has no value, then it is kept empty', 'scope&username=', { scope: '', username: '' }],
    ['when separators repeat, then empty pairs are skipped', '&&a=1&&', { a: '1' }],
    ['when the value is UTF-8, then it is decoded', 'username=j%C3%BCrgen', { username: 'jürgen' }],
  ];
  test.each(ok)('%s', (_name, body, expected) => {
    expect(Object.fromEntries(parseForm(Buffer.from(body)))).toEqual(expected);
  });

  const bad: Array<[string, Buffer, RegExp]> = [
    [
      'when a parameter is repeated, then it is invalid_request naming it',
      Buffer.from('username=a&username=b'),
      /"username" is repeated/,
    ],
    [
      'when a parameter is repeated with an empty value, then it is still repeated',
      Buffer.from('password=&password=x'),
      /repeated/,
    ],
    [
      'when a name is repeated in another encoding, then it is still repeated',
      Buffer.from('grant_type=a&grant%5Ftype=b'),
      /repeated/,
    ],
    [
      'when a percent sequence is broken, then it is invalid_request',
      Buffer.from('password=%E0%A4%A'),
      /form encoding/,
    ],
    ['when the bytes are not UTF-8, then it is invalid_request', Buffer.from([0x61, 0x3d, 0xff, 0xfe]), /UTF-8/],
    [
      'when there are too many parameters, then it is invalid_request',
      Buffer.from(Array.from({ length: 65 }, (_, i) => `p${i}=1`).join('&')),
      /too many/,
    ],
  ];
  test.each(bad)('%s', (_name, body, message) => {
    const error = oauthError(() => parseForm(body));
    expect(error.status).toBe(400);
    expect(error.error).toBe('invalid_request');
    expect(error.description).toMatch(message);
  });

  test('when a repeated name is long or binary, then the error quotes it shortened and printable only', () => {
    const name = `${'\u0001'.repeat(3)}${'n'.repeat(200)}`;
    const error = oauthError(() =>
      parseForm(Buffer.from(`${encodeURIComponent(name)}=1&${encodeURIComponent(name)}=2`)),
    );
    expect(error.description).not.toContain('\u0001');
    expect(error.description.length).toBeLessThan(120);
  });
});

describe('param and requiredParam', () => {
  const params = parseForm(Buffer.from('username=alice&password='));
  test('when a parameter has a value, then it is returned', () => expect(param(params, 'username')).toBe('alice'));
  test('when a parameter is empty, then it counts as absent (RFC 6749 §3.1)', () => {
    expect(param(params, 'password')).toBeUndefined();
    expect(oauthError(() => requiredParam(params, 'password')).description).toBe('missing parameter "password"');
  });
});

describe('parseBasicCredentials', () => {
  const ok: Array<[string, string | undefined, { clientId: string; secret: string } | undefined]> = [
    ['when there is no header, then there are no credentials', undefined, undefined],
    ['when the scheme is Bearer, then there are no Basic credentials', 'Bearer abc', undefined],
    ['when id and secret are plain, then both are read', basic('kapi:kapi'), { clientId: 'kapi', secret: 'kapi' }],
    [
      'when the scheme is lower case, then it is still Basic',
      `basic ${Buffer.from('a:b').toString('base64')}`,
      { clientId: 'a', secret: 'b' },
    ],
    [
      'when id and secret are form-encoded (RFC 6749 §2.3.1), then they are decoded',
      basic('my%20client:s%3Acret%2B%25+x'),
      { clientId: 'my client', secret: 's:cret+% x' },
    ],
    [
      'when the secret contains a colon unencoded, then everything after the first colon is the secret',
      basic('a:b:c'),
      { clientId: 'a', secret: 'b:c' },
    ],
    ['when the secret is empty, then it is read as empty', basic('kapi:'), { clientId: 'kapi', secret: '' }],
  ];
  test.each(ok)('%s', (_name, header, expected) => {
    expect(parseBasicCredentials(header)).toEqual(expected);
  });

  const bad: Array<[string, string]> = [
    ['when the base64 is broken, then it is invalid_request', 'Basic %%%'],
    ['when there is no colon, then it is invalid_request', basic('kapi')],
    ['when the id is empty, then it is invalid_request', basic(':secret')],
    ['when the encoding inside is broken, then it is invalid_request', basic('kapi:%zz')],
    ['when Basic has no credentials at all, then it is invalid_request', 'Basic'],
  ];
  test.each(bad)('%s', (_name, header) => {
    const error = oauthError(() => parseBasicCredentials(header));
    expect([error.status, error.error]).toEqual([400, 'invalid_request']);
  });
});

describe('isFormContentType', () => {
  const cases: Array<[string | undefined, boolean]> = [
    ['application/x-www-form-urlencoded', true],
    ['Application/X-WWW-Form-Urlencoded; charset=UTF-8', true],
    ['application/x-www-form-urlencoded;charset="utf-8"', true],
    ['application/x-www-form-urlencoded; charset=iso-8859-1', false],
    ['application/json', false],
    ['multipart/form-data; boundary=x', false],
    ['text/plain', false],
    [undefined, false],
    ['', false],
  ];
  test.each(cases)('when the Content-Type is %p, then form is %p', (header, expected) => {
    expect(isFormContentType(header)).toBe(expected);
  });
});
