import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  adhocAnswerOf,
  adhocQueryOf,
  labelSetQueryOf,
  labelSetsOf,
  metadataOf,
} from '../../../../src/apis/monitoring/v1alpha3/adhoc.js';
import { InvalidParameterError } from '../../../../src/server/errors.js';

/**
 * The ad-hoc routes' pure part: what a `targets/query` or `targets/labelsets` request is sent upstream as (kapi's
 * print, confined), each bad parameter a 400 naming it, and Prometheus's answers in KubeSphere's shapes.
 */
const NOW = 1_700_000_000;

const refusal = (work: () => unknown) => {
  try {
    work();
  } catch (error) {
    if (error instanceof InvalidParameterError) return { field: error.parameter, message: error.message };
    throw error;
  }
  return undefined;
};

describe('a targets/query request', () => {
  test('when it names a namespace, then kapi sends its own print with the namespace on every selector, and the times asked', () => {
    expect(
      adhocQueryOf(
        { expr: 'sum(rate(x{job="a"}[5m])) / on() group_left y  # note', start: NOW - 60, end: NOW, step: '30s' },
        'team-a',
        NOW,
      ),
    ).toEqual({
      promql: 'sum(rate(x{job="a",namespace="team-a"}[5m])) / on () group_left () y{namespace="team-a"}',
      timing: { start: NOW - 60, end: NOW, step: 30 },
    });
    expect(adhocQueryOf({ expr: "up{pod='a\\'b'}" }, undefined, NOW)).toEqual({
      promql: 'up{pod="a\'b"}',
      timing: { instant: NOW },
    });
  });

  test.each([
    [{}, 'expr', /is required/],
    [{ expr: '  ' }, 'expr', /is required/],
    [{ expr: 'up{' }, 'expr', /ends too soon|unexpected/],
    [{ expr: 'up', start: 2, end: 1 }, 'start', /after end/],
    [{ expr: 'up', start: 1 }, 'end', /required with start/],
    [{ expr: 'up', time: 1, start: 1, end: 2 }, 'time', /mutually exclusive/],
    [{ expr: 'up', start: 0, end: NOW, step: '1s' }, 'step', /points per series/],
    [{ expr: 'up[5m]', start: NOW - 60, end: NOW }, 'expr', /must be a scalar or an instant vector/],
    [{ expr: '"text"', start: NOW - 60, end: NOW }, 'expr', /not a string/],
    [{ expr: 'up{namespace="b"}' }, 'expr', /conflicts with the namespace "a"/],
  ])('when %j is asked in namespace a, then a 400 naming %s', (raw, field, message) => {
    const refused = refusal(() => adhocQueryOf(raw as never, 'a', NOW));
    expect(refused?.field).toBe(field);
    expect(refused?.message).toMatch(message);
  });
});

describe('a targets/labelsets request', () => {
  test('when it names a metric, then a series selector confined to the namespace', () => {
    expect(labelSetQueryOf({ metric: 'up', start: 1, end: 2 }, 'ns')).toEqual({
      match: 'up{namespace="ns"}',
      start: 1,
      end: 2,
    });
  });

  test.each([
    [{ metric: 'up' }, 'start', /required fields are missing: \[start, end\]/],
    [{ start: 1, end: 2 }, 'metric', /required fields are missing: \[metric\]/],
    [{ metric: 'sum(up)', start: 1, end: 2 }, 'metric', /a metric name or a series selector/],
    [{ metric: 'up offset 5m', start: 1, end: 2 }, 'metric', /a metric name or a series selector/],
    [{ metric: 'up', start: 3, end: 2 }, 'start', /after end/],
  ])('when %j is asked, then a 400 naming %s', (raw, field, message) => {
    const refused = refusal(() => labelSetQueryOf(raw, 'ns'));
    expect(refused?.field).toBe(field);
    expect(refused?.message).toMatch(message);
  });
});

describe('Prometheus’s answers in KubeSphere’s shapes', () => {
  test('when a query answers series, then each with the metering fields; a failure is the answer’s error', () => {
    expect(
      adhocAnswerOf({
        data: { resultType: 'vector', result: [{ metric: { a: 'b' }, value: [1, '2'] }, { value: [1, '3'] }] },
      }),
    ).toEqual({
      data: {
        resultType: 'vector',
        result: [
          expect.objectContaining({ metric: { a: 'b' }, value: [1, '2'], min_value: '', currency_unit: '' }),
          expect.not.objectContaining({ metric: expect.anything() }),
        ],
      },
    });
    expect(adhocAnswerOf({ error: 'timeout: query timed out' })).toEqual({
      data: {},
      error: 'timeout: query timed out',
    });
  });

  test('when series are listed, then their labels without __name__, null for none, an error past the cap', () => {
    expect(
      labelSetsOf(
        [
          { __name__: 'up', job: 'a' },
          { __name__: 'up', job: 'b', x: 1 },
        ],
        10,
      ),
    ).toEqual({
      data: [{ job: 'a' }, { job: 'b' }],
    });
    expect(labelSetsOf([], 10)).toEqual({ data: null });
    expect(labelSetsOf([{}, {}, {}], 2)).toEqual({ error: expect.stringContaining('too many series (3; at most 2)') });
  });

  test('when targets’ metadata is read, then one entry per metric, the first seen, without target or unit', () => {
    expect(
      metadataOf([
        { target: { job: 'a' }, metric: 'up', type: 'gauge', help: 'Up.', unit: '' },
        { target: { job: 'b' }, metric: 'up', type: 'gauge', help: 'Other.' },
        { metric: 'x_total', type: 'counter', help: '' },
        { type: 'gauge' },
      ]),
    ).toEqual({
      data: [
        { metric: 'up', type: 'gauge', help: 'Up.' },
        { metric: 'x_total', type: 'counter' },
      ],
    });
    expect(metadataOf([])).toEqual({ data: null });
  });
});

describe('whatever the query', () => {
  test('when Prometheus’s parser cases are cut, spliced and salted, then each is answered or refused with a 400, never anything else', () => {
    const corpus = join(import.meta.dirname, '..', 'promql', 'prometheus-v2.42.0');
    const cases: string[] = [
      ...JSON.parse(readFileSync(join(corpus, 'valid.json'), 'utf8')),
      ...JSON.parse(readFileSync(join(corpus, 'invalid.json'), 'utf8')),
    ].filter((query: string) => query.length < 4096);
    // a fixed sequence (xorshift): the same inputs every run
    let seed = 0x2545f491;
    const next = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 2 ** 32;
    };
    const salt = [
      '(',
      ')',
      '{',
      '}',
      '[',
      ']',
      '"',
      "'",
      '`',
      '\\',
      '@',
      ':',
      ',',
      '#',
      '\n',
      '=~',
      'offset',
      '-',
      ' or ',
    ];
    let answered = 0;
    let refused = 0;
    for (const query of cases) {
      for (let round = 0; round < 8; round++) {
        const at = Math.floor(next() * (query.length + 1));
        const mutated =
          round % 2 === 0
            ? query.slice(0, at) + (salt[Math.floor(next() * salt.length)] as string) + query.slice(at)
            : query.slice(0, at) + (cases[Math.floor(next() * cases.length)] as string).slice(at);
        for (const namespace of [undefined, 'ns']) {
          try {
            adhocQueryOf({ expr: mutated }, namespace, NOW);
            answered++;
          } catch (error) {
            if (!(error instanceof InvalidParameterError))
              throw new Error(`${JSON.stringify(mutated)}: ${String(error)}`, { cause: error });
            refused++;
          }
        }
      }
    }
    expect(answered + refused).toBeGreaterThan(10_000);
    expect(answered).toBeGreaterThan(500);
    expect(refused).toBeGreaterThan(500);
  });
});
