import { EqualityFilter, FilterParser } from 'ldapts';
import {
  andFilter,
  equalityFilter,
  escapeDnValue,
  escapeFilterValue,
  leftmostValue,
  parseDn,
} from '../../../src/config/identity-providers/ldap-syntax.js';

/** What attackers and unusual directories put into login names (SPEC §14: no injection). */
const HOSTILE = [
  '*',
  '*)(uid=*',
  'admin)(|(uid=*',
  '\\',
  '\\2a',
  'a\u0000b',
  '\u0000',
  '(',
  ')',
  'jürgen',
  '山田',
  'é\u0301',
  'emoji 😀',
  'x'.repeat(10_000),
  'tab\there',
  'del\u007f',
];

describe('escapeFilterValue (RFC 4515)', () => {
  it.each([
    ['*', '\\2a'],
    ['(', '\\28'],
    [')', '\\29'],
    ['\\', '\\5c'],
    ['\u0000', '\\00'],
    ['a*b(c)d\\e', 'a\\2ab\\28c\\29d\\5ce'],
    ['\n\u007f', '\\0a\\7f'],
    ['jürgen', 'jürgen'],
    ['plain.name-1', 'plain.name-1'],
  ])('when the value is %p, then it is written %p', (value, escaped) => {
    expect(escapeFilterValue(value)).toBe(escaped);
  });

  it.each(HOSTILE.map((value) => [value.length > 40 ? `${value.slice(0, 20)}… (${value.length})` : value, value]))(
    'when %p is put into a filter, then a real LDAP parser reads back one equality match of exactly that value',
    (_label, value) => {
      const parsed = FilterParser.parseString(equalityFilter('uid', value));
      expect(parsed).toBeInstanceOf(EqualityFilter);
      expect((parsed as EqualityFilter).attribute).toBe('uid');
      expect((parsed as EqualityFilter).value).toBe(value);
    },
  );

  it('when filters are joined, then one is kept as is and several are ANDed', () => {
    expect(andFilter(['(a=b)'])).toBe('(a=b)');
    expect(andFilter(['(objectClass=person)', equalityFilter('uid', '*')])).toBe('(&(objectClass=person)(uid=\\2a))');
  });
});

describe('parseDn (RFC 4514)', () => {
  it.each([
    ['', []],
    ['dc=example,dc=com', [[{ type: 'dc', value: 'example' }], [{ type: 'dc', value: 'com' }]]],
    ['cn=a, ou=b', [[{ type: 'cn', value: 'a' }], [{ type: 'ou', value: 'b' }]]],
    [
      'cn=a+uid=b,dc=x',
      [
        [
          { type: 'cn', value: 'a' },
          { type: 'uid', value: 'b' },
        ],
        [{ type: 'dc', value: 'x' }],
      ],
    ],
    ['cn=Smith\\, John,dc=x', [[{ type: 'cn', value: 'Smith, John' }], [{ type: 'dc', value: 'x' }]]],
    ['cn=\\23hash\\20,dc=x', [[{ type: 'cn', value: '#hash ' }], [{ type: 'dc', value: 'x' }]]],
    ['cn=\\ lead', [[{ type: 'cn', value: ' lead' }]]],
    ['cn=a\\00b', [[{ type: 'cn', value: 'a\u0000b' }]]],
    ['cn=J\\C3\\BCrgen', [[{ type: 'cn', value: 'Jürgen' }]]],
    ['cn=Jürgen', [[{ type: 'cn', value: 'Jürgen' }]]],
    ['cn=a=b', [[{ type: 'cn', value: 'a=b' }]]],
    ['2.5.4.3=#04024869', [[{ type: '2.5.4.3', value: '#04024869' }]]],
    ['cn=a;dc=b', [[{ type: 'cn', value: 'a' }], [{ type: 'dc', value: 'b' }]]],
  ])('when the DN is %p, then it reads as %j', (text, rdns) => {
    expect(parseDn(text)).toEqual(rdns);
  });

  it.each([
    ['kapi', 'no "="'],
    ['=x', 'is not an attribute type'],
    ['c n=x', 'is not an attribute type'],
    ['cn=x,', 'ends with a separator'],
    ['cn=a"b', 'must be escaped'],
    ['cn=a\\zz', 'escapes nothing'],
    ['cn=\\C3', 'is not UTF-8'],
    ['cn=#123', 'pairs of hex digits'],
  ])('when the DN is %p, then it is refused: %s', (text, message) => {
    expect(() => parseDn(text)).toThrow(message);
  });

  it.each(HOSTILE.concat([' lead', 'trail ', '#x', 'a,b+c;d<e>f"g=h']))(
    'when %p is escaped into a DN, then the DN parses back to that value',
    (value) => {
      const dn = `uid=${escapeDnValue(value)},ou=people,dc=kapi,dc=test`;
      expect(parseDn(dn)[0]).toEqual([{ type: 'uid', value }]);
    },
  );

  it('when a group DN is read, then its name is the leftmost value; a broken DN has none', () => {
    expect(leftmostValue('cn=devs\\+ops,ou=groups,dc=x')).toBe('devs+ops');
    expect(leftmostValue('not a dn')).toBeUndefined();
    expect(leftmostValue('')).toBeUndefined();
  });
});
