import {
  EVERYTHING,
  LabelSelectorError,
  matchesLabelSelector,
  parseLabelSelector,
  type LabelRequirement,
} from '../../src/kube/label-selector.js';

function summary(text: string): string[] {
  return parseLabelSelector(text).requirements.map((r: LabelRequirement) =>
    `${r.key} ${r.operator} ${[...r.values].map((v) => `[${v}]`).join('')}`.trim(),
  );
}

describe('parseLabelSelector', () => {
  it.each([
    ['an empty string', '', []],
    ['only whitespace', '  \t ', []],
    ['equality', 'a=b', ['a = [b]']],
    ['double equals', 'a==b', ['a == [b]']],
    ['inequality', 'a!=b', ['a != [b]']],
    ['an empty value', 'a=', ['a = []']],
    ['an empty value before a comma', 'a=,b', ['a = []', 'b exists']],
    ['a set', 'a in (x,y)', ['a in [x][y]']],
    ['a set without spaces', 'a in(x,y)', ['a in [x][y]']],
    ['a negated set', 'a notin (x)', ['a notin [x]']],
    ['an empty set, meaning the empty value', 'a in ()', ['a in []']],
    ['empty set entries', 'a in (,x,)', ['a in [][x]']],
    ['existence', 'a', ['a exists']],
    ['absence', '!a', ['a !']],
    ['absence with space', '! a', ['a !']],
    ['greater than', 'a>3', ['a > [3]']],
    ['less than', 'a < 10', ['a < [10]']],
    ['commas as AND', 'a=b,c!=d,e in (f),!g,h', ['a = [b]', 'c != [d]', 'e in [f]', 'g !', 'h exists']],
    ['generous whitespace', '  a  =  b ,  c  notin  ( x , y )  ', ['a = [b]', 'c notin [x][y]']],
    ['a prefixed key', 'kubernetes.io/os=linux', ['kubernetes.io/os = [linux]']],
    ['the keyword as a key and value', 'in in (in,notin)', ['in in [in][notin]']],
    ['a repeated key', 'a,a=b', ['a exists', 'a = [b]']],
    ['a 63-character value', `a=${'v'.repeat(63)}`, [`a = [${'v'.repeat(63)}]`]],
  ])('when the selector is %s, then it parses to its requirements', (_case, text, expected) => {
    expect(summary(text)).toEqual(expected);
  });

  it('when the selector is empty, then it is the shared match-everything selector', () => {
    expect(parseLabelSelector('')).toBe(EVERYTHING);
  });

  it.each([
    ['a bare operator', '=b', /found '='.*expected/],
    ['a trailing comma', 'a=b,', /after ','/],
    ['a leading comma', ',a', /found ','/],
    ['two values', 'a=b c', /found 'c'.*expected ',' or the end/],
    ['a missing set', 'a in x', /expected '\('/],
    ['an unclosed set', 'a in (x', /found the end/],
    ['values without comma', 'a in (x y)', /found 'y'/],
    ['an unknown operator', 'a ~ b', /found '~'|invalid label key/],
    ['an operator after absence', '!a=b', /found '='/],
    ['an operator instead of a value', 'a==(b)', /found '\('.*expected a value/],
    ['a key with a space inside', 'a b=c', /found 'b'/],
    ['a key with an invalid character', 'a$=b', /invalid label key "a\$"/],
    ['a key too long', `${'k'.repeat(64)}=v`, /exceeds 63/],
    ['a key with two slashes', 'a/b/c=d', /at most one '\/'/],
    ['a key with an empty prefix', '/a=b', /prefix before '\/' is empty/],
    ['a key with an upper-case prefix', 'Example.com/a=b', /DNS subdomain/],
    ['a key with an empty name', 'example.com/=b', /name part is empty/],
    ['a value with an invalid character', 'a=b$', /invalid value "b\$"/],
    ['a value starting with a dash', 'a=-b', /invalid value "-b"/],
    ['a value too long', `a=${'v'.repeat(64)}`, /exceeds 63/],
    ['a non-integer bound', 'a>b', /must be an integer/],
    ['an operator with no key', 'in (a)', /found '\('/],
  ])(
    'when the selector has %s, then it is rejected with a LabelSelectorError saying what is wrong',
    (_case, text, message) => {
      expect(() => parseLabelSelector(text)).toThrow(LabelSelectorError);
      expect(() => parseLabelSelector(text)).toThrow(message);
    },
  );
});

describe('matchesLabelSelector', () => {
  const labels = { env: 'prod', tier: '', 'kubernetes.io/os': 'linux', count: '5' };

  it.each([
    ['', true],
    ['env=prod', true],
    ['env==prod', true],
    ['env=dev', false],
    ['env!=dev', true],
    ['env!=prod', false],
    ['missing!=x', true],
    ['env in (dev,prod)', true],
    ['env in (dev)', false],
    ['missing in (x)', false],
    ['env notin (dev)', true],
    ['env notin (prod)', false],
    ['missing notin (x)', true],
    ['env', true],
    ['missing', false],
    ['!missing', true],
    ['!env', false],
    ['tier', true],
    ['tier=', true],
    ['tier in ()', true],
    ['env=', false],
    ['kubernetes.io/os=linux', true],
    ['count>4', true],
    ['count>5', false],
    ['count<6', true],
    ['env>1', false],
    ['missing<1', false],
    ['env=prod,tier', true],
    ['env=prod,!tier', false],
    ['constructor', false],
    ['!toString', true],
  ])('when the selector is "%s", then matching gives %s', (text, expected) => {
    expect(matchesLabelSelector(parseLabelSelector(text), labels)).toBe(expected);
  });

  it.each([
    ['', true],
    ['a', false],
    ['!a', true],
    ['a!=b', true],
    ['a notin (b)', true],
    ['a=b', false],
  ])('when the object has no labels and the selector is "%s", then matching gives %s', (text, expected) => {
    expect(matchesLabelSelector(parseLabelSelector(text), undefined)).toBe(expected);
  });

  it('when one selector is matched many times, then it gives the same answer each time', () => {
    const selector = parseLabelSelector('env in (prod),tier');
    const results = Array.from({ length: 100 }, (_, i) =>
      matchesLabelSelector(selector, i % 2 === 0 ? labels : { env: 'prod' }),
    );
    expect(results.filter(Boolean)).toHaveLength(50);
  });
});
