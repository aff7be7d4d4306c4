import { builtinTypes } from '../../src/sandbox/builtin-types.js';
import { matchesFilter, parseFieldSelector, parseObjectFilter, selectedName } from '../../src/sandbox/object-filter.js';
import { StatusError } from '../../src/sandbox/status.js';
import { toStored } from '../../src/sandbox/stored-object.js';

const pods = builtinTypes().find((t) => t.resource === 'pods')!;
const stored = toStored(pods, {
  metadata: { name: 'web-1', namespace: 'demo', uid: 'u', resourceVersion: '7', labels: { app: 'web', tier: 'front' } },
  spec: { nodeName: 'node-2', hostNetwork: true },
  status: { phase: 'Running' },
});

describe('field selectors', () => {
  test.each([
    ['spec.nodeName=node-2', [{ field: 'spec.nodeName', operator: '=', value: 'node-2' }]],
    ['spec.nodeName==node-2', [{ field: 'spec.nodeName', operator: '=', value: 'node-2' }]],
    [
      'status.phase!=Failed,metadata.name=web-1',
      [
        { field: 'status.phase', operator: '!=', value: 'Failed' },
        { field: 'metadata.name', operator: '=', value: 'web-1' },
      ],
    ],
    ['metadata.name=a\\,b', [{ field: 'metadata.name', operator: '=', value: 'a,b' }]],
    ['spec.nodeName=', [{ field: 'spec.nodeName', operator: '=', value: '' }]],
    ['spec.nodeName=x,', [{ field: 'spec.nodeName', operator: '=', value: 'x' }]],
  ])('when parsing %j, then the requirements are %j', (text, expected) => {
    expect(parseFieldSelector(pods, text)).toEqual(expected);
  });

  test.each([
    ['metadata.name', /invalid selector/],
    ['spec.unknown=1', /field label not supported: spec.unknown/],
    ['metadata.name=a=b', /invalid field selector/],
    ['metadata.name=a\\x', /invalid field selector/],
  ])('when parsing %j, then it is a 400', (text, message) => {
    expect(() => parseFieldSelector(pods, text)).toThrow(StatusError);
    expect(() => parseFieldSelector(pods, text)).toThrow(message);
  });

  test.each([
    ['spec.nodeName=node-2', '', true],
    ['spec.nodeName!=node-2', '', false],
    ['spec.hostNetwork=true,status.phase=Running', '', true],
    ['metadata.namespace=demo', 'app in (web,api),!canary', true],
    ['', 'tier=back', false],
    ['spec.nodeName=node-3', 'app=web', false],
  ])('when matching fields %j and labels %j, then the answer is %s', (fields, labels, expected) => {
    expect(matchesFilter(parseObjectFilter(pods, labels || undefined, fields || undefined), stored)).toBe(expected);
  });

  test('when no selector is given, then there is no filter (the shared fast path)', () => {
    expect(parseObjectFilter(pods, '', '')).toBeUndefined();
    expect(parseObjectFilter(pods, undefined, undefined)).toBeUndefined();
  });

  test('when a selector pins exactly one name, then that name is reported for authorization', () => {
    expect(selectedName(parseFieldSelector(pods, 'metadata.name=a,status.phase=Running'))).toBe('a');
    expect(selectedName(parseFieldSelector(pods, 'metadata.name!=a'))).toBeUndefined();
  });
});
