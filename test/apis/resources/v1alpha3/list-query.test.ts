import { parseListQuery } from '../../../../src/apis/resources/v1alpha3/list-query.js';
import { matchesLabelSelector } from '../../../../src/kube/label-selector.js';
import { InvalidParameterError } from '../../../../src/server/errors.js';

describe('parseListQuery', () => {
  it('when no parameter is given, then it asks for every node, newest first', () => {
    expect(parseListQuery({})).toEqual({
      page: 1,
      limit: undefined,
      sortBy: 'creationTimestamp',
      ascending: false,
      selectors: [],
      filterKey: '',
    });
  });

  it.each([
    ['page', { page: '3' }, { page: 3 }],
    ['a limit', { limit: '10' }, { limit: 10 }],
    ['limit 0 (only the count)', { limit: '0' }, { limit: 0 }],
    ['limit -1, KubeSphere’s “all” (its console’s page=1&limit=-1)', { limit: '-1', page: '1' }, { limit: undefined }],
    ['nameAndAlias, the same as name', { nameAndAlias: 'work' }, { name: 'work' }],
    ['sortBy name', { sortBy: 'name' }, { sortBy: 'name' }],
    ['sortBy creationTimestamp', { sortBy: 'creationTimestamp' }, { sortBy: 'creationTimestamp' }],
    ['sortBy createTime, the alias', { sortBy: 'createTime' }, { sortBy: 'creationTimestamp' }],
    ['ascending true', { ascending: 'true' }, { ascending: true }],
    ['ascending false', { ascending: 'false' }, { ascending: false }],
    ['a name substring', { name: 'work' }, { name: 'work' }],
    ['a uid', { uid: 'abc-123' }, { uid: 'abc-123' }],
    ['status running', { status: 'running' }, { status: 'running' }],
    ['status warning', { status: 'warning' }, { status: 'warning' }],
    ['status unschedulable', { status: 'unschedulable' }, { status: 'unschedulable' }],
    ['the same value twice', { limit: ['5', '5'] }, { limit: 5 }],
    ['an empty page (absent)', { page: '' }, { page: 1 }],
    ['an empty limit (absent)', { limit: '' }, { limit: undefined }],
    ['an empty sortBy (absent)', { sortBy: '' }, { sortBy: 'creationTimestamp' }],
    ['an empty ascending (absent)', { ascending: '' }, { ascending: false }],
  ])('when the query has %s, then it is read', (_case, query, expected) => {
    expect(parseListQuery(query)).toMatchObject(expected);
  });

  it.each([
    ['1', true],
    ['t', true],
    ['T', true],
    ['TRUE', true],
    ['true', true],
    ['True', true],
    ['0', false],
    ['f', false],
    ['F', false],
    ['FALSE', false],
    ['false', false],
    ['False', false],
  ])(
    'when ascending is %s (a value Go strconv.ParseBool accepts, as KubeSphere reads it), then it is %s',
    (text, ascending) => {
      expect(parseListQuery({ ascending: text }).ascending).toBe(ascending);
    },
  );

  it('when names are given, then they are an exact set without empty entries', () => {
    expect(parseListQuery({ names: 'a,b,,c' }).names).toEqual(new Set(['a', 'b', 'c']));
  });

  it.each([
    ['name', { name: '' }],
    ['names', { names: '' }],
    ['names', { names: ',' }],
    ['uid', { uid: '' }],
    ['status', { status: '' }],
  ])('when %s is empty, then it filters nothing', (parameter, query) => {
    expect(parseListQuery(query)).not.toHaveProperty(parameter);
  });

  it('when label and labelSelector are both given, then both selectors apply', () => {
    const query = parseListQuery({ labelSelector: 'role=worker', label: 'zone in (a,b)' });
    expect(query.selectors).toHaveLength(2);
    const matchesAll = (labels: Record<string, string>) =>
      query.selectors.every((s) => matchesLabelSelector(s, labels));
    expect(matchesAll({ role: 'worker', zone: 'a' })).toBe(true);
    expect(matchesAll({ role: 'worker', zone: 'c' })).toBe(false);
    expect(matchesAll({ role: 'master', zone: 'a' })).toBe(false);
  });

  it('when unknown parameters are given, then they are ignored (KubeSphere 3.x empties the list)', () => {
    expect(parseListQuery({ foo: 'bar', fieldSelector: 'x', 'page[x]': 'y', limit: '2' })).toEqual(
      parseListQuery({ limit: '2' }),
    );
  });

  it.each([
    ['page', { page: '0' }],
    ['page', { page: '-1' }],
    ['page', { page: 'two' }],
    ['page', { page: '1.5' }],
    ['page', { page: ' 1' }],
    ['page', { page: '99999999999999999999' }],
    ['limit', { limit: '-2' }],
    ['limit', { limit: 'ten' }],
    ['limit', { limit: '1e3' }],
    ['limit', { limit: '0x10' }],
    ['ascending', { ascending: 'yes' }],
    ['ascending', { ascending: 'tRUE' }],
    ['ascending', { ascending: 'FaLse' }],
    ['ascending', { ascending: ' true' }],
    ['ascending', { ascending: '2' }],
    ['ascending', { ascending: 'constructor' }],
    ['sortBy', { sortBy: 'updateTime' }],
    ['sortBy', { sortBy: 'constructor' }],
    ['status', { status: 'ready' }],
    ['status', { status: 'Running' }],
    ['labelSelector', { labelSelector: 'a in (b' }],
    ['labelSelector', { labelSelector: 'bad key=x' }],
    ['label', { label: '=x' }],
    ['limit', { limit: ['5', '6'] }],
    ['page', { page: ['1', '2'] }],
    ['name', { name: { nested: 'x' } }],
    ['labelSelector', { labelSelector: ['a', { b: 'c' }] }],
  ])('when %s has a bad value (%j), then the error names that parameter', (parameter, query) => {
    let error: unknown;
    try {
      parseListQuery(query);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidParameterError);
    expect((error as InvalidParameterError).parameter).toBe(parameter);
    expect((error as InvalidParameterError).message).toContain(`"${parameter}"`);
  });

  it.each([
    ['only paging and sorting differ', true, { limit: '5', sortBy: 'name' }, { page: '3' }],
    ['names are given in another order', true, { names: 'a,b' }, { names: 'b,a,' }],
    ['the selectors differ', false, { labelSelector: 'a=b' }, { labelSelector: 'a=c' }],
    ['a selector moves between label and labelSelector', true, { label: 'a=b' }, { labelSelector: 'a=b' }],
    ['the name differs', false, { name: 'x' }, { name: 'y' }],
    ['a status is added', false, {}, { status: 'running' }],
    ['a uid is added', false, { name: 'x' }, { name: 'x', uid: 'u' }],
  ])('when %s, then equal filter keys is %s', (_case, equal, a, b) => {
    expect(parseListQuery(a).filterKey === parseListQuery(b).filterKey).toBe(equal);
  });

  it('when any filter is given, then the filter key is not empty', () => {
    for (const query of [
      { name: 'x' },
      { names: 'x' },
      { label: 'x' },
      { labelSelector: 'x' },
      { status: 'warning' },
      { uid: 'x' },
    ]) {
      expect(parseListQuery(query).filterKey).not.toBe('');
    }
  });

  it('when a selector does not parse, then the error says what is wrong with it', () => {
    expect(() => parseListQuery({ labelSelector: 'a in (b' })).toThrow(/labelSelector.*found the end/);
  });
});
