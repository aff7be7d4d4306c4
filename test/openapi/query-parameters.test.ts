import { z } from 'zod';
import { expressPath } from '../../src/openapi/operation.js';
import { parseQuery } from '../../src/openapi/query-parameters.js';
import { InvalidParameterError } from '../../src/server/errors.js';

const schemas = z.object({
  page: z.int().min(1).default(1),
  size: z.int().min(0).max(100).optional(),
  from: z.int().optional(),
  ratio: z.number().optional(),
  follow: z.boolean().default(false),
  sort: z.enum(['asc', 'desc']).default('desc'),
  names: z.array(z.string()).optional(),
  text: z.string().optional(),
  seconds: z
    .string()
    .optional()
    .superRefine((value, ctx) => {
      if (value !== undefined && value.length > 10) ctx.addIssue({ code: 'custom', message: 'seconds are required' });
    }),
});

function problemOf(query: Record<string, unknown>): { parameter: string; message: string } {
  try {
    parseQuery(schemas, query);
  } catch (err) {
    if (err instanceof InvalidParameterError) return { parameter: err.parameter, message: err.message };
    throw err;
  }
  throw new Error('no error');
}

describe('parseQuery', () => {
  it('when nothing is given, then the defaults apply and optional parameters stay absent', () => {
    expect(parseQuery(schemas, {})).toEqual({ page: 1, follow: false, sort: 'desc' });
  });

  it.each([
    ['an integer', { page: '3' }, { page: 3 }],
    ['a negative integer', { from: '-2' }, { from: -2 }],
    ['a number with a fraction', { ratio: '0.5' }, { ratio: 0.5 }],
    ['true', { follow: 'true' }, { follow: true }],
    ['a Go spelling of true', { follow: 'T' }, { follow: true }],
    ['a Go spelling of false', { follow: '0' }, { follow: false }],
    ['an allowed value', { sort: 'asc' }, { sort: 'asc' }],
    ['a comma-separated array without empty items', { names: 'a,,b' }, { names: ['a', 'b'] }],
    ['text', { text: 'x y' }, { text: 'x y' }],
    ['an empty value, read as absent', { page: '', text: '' }, { page: 1 }],
    ['the same value twice', { page: ['2', '2'] }, { page: 2 }],
    ['an unknown parameter, ignored', { other: 'x' }, { page: 1 }],
  ])('when the query has %s, then it is decoded in form style', (_case, query, expected) => {
    expect(parseQuery(schemas, query)).toMatchObject(expected);
    if ('other' in query) expect(parseQuery(schemas, query)).not.toHaveProperty('other');
  });

  it.each([
    [{ page: '0' }, 'page', '"0" is not an integer of at least 1'],
    [{ page: 'two' }, 'page', '"two" is not an integer of at least 1'],
    [{ page: '99999999999999999999' }, 'page', 'is not an integer of at least 1'],
    [{ size: '101' }, 'size', '"101" is not an integer from 0 to 100'],
    [{ from: '1.5' }, 'from', '"1.5" is not an integer'],
    [{ ratio: 'x' }, 'ratio', '"x" is not a number'],
    [{ follow: 'yes' }, 'follow', '"yes" is not a boolean (true or false)'],
    [{ sort: 'up' }, 'sort', '"up" is not one of asc, desc'],
    [{ seconds: '12345678901234' }, 'seconds', 'seconds are required'],
    [{ page: ['1', '2'] }, 'page', 'given more than once with different values'],
    [{ text: { nested: 'x' } }, 'text', 'must be a single text value'],
  ])('when the query is %j, then a 400 names %s and says %s', (query, parameter, message) => {
    const problem = problemOf(query);
    expect(problem.parameter).toBe(parameter);
    expect(problem.message).toContain(`"${parameter}"`);
    expect(problem.message).toContain(message);
  });

  it('when a required parameter is absent, then the error says it is required', () => {
    expect(() => parseQuery(z.object({ q: z.string() }), {})).toThrow(/"q": is required/);
  });

  it('when a parameter has a type with no form encoding, then the schema is refused at once', () => {
    expect(() => parseQuery(z.object({ o: z.object({ a: z.string() }) }), {})).toThrow(/no form encoding/);
  });
});

describe('expressPath', () => {
  it.each([
    ['/kapis/g/v1/nodes', '/kapis/g/v1', '/nodes'],
    ['/kapis/g/v1/nodes/{name}', '/kapis/g/v1', '/nodes/:name'],
    ['/oauth/token', '/oauth', '/token'],
  ])('when %s is mounted under %s, then Express sees %s', (template, base, expected) => {
    expect(expressPath(template, base)).toBe(expected);
  });

  it('when the path is not under the base, then mounting fails at start-up', () => {
    expect(() => expressPath('/oauth/token', '/kapis')).toThrow(/not under/);
  });
});
