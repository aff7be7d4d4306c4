import { applyPatch, jsonPatch, mergePatch, stripDirectives } from '../../src/sandbox/patch.js';

describe('patches', () => {
  test.each([
    [{ a: 1, b: { c: 2, d: 3 } }, { b: { c: null, e: 4 } }, { a: 1, b: { d: 3, e: 4 } }],
    [{ a: [1, 2] }, { a: [3] }, { a: [3] }],
    [{ a: 1 }, { a: { b: 1 } }, { a: { b: 1 } }],
    [{ a: { b: 1 } }, { a: 'x' }, { a: 'x' }],
  ])('when merge-patching %j with %j, then the result is %j (RFC 7386)', (target, patch, expected) => {
    expect(mergePatch(target, patch)).toEqual(expected);
  });

  test('when a strategic merge patch carries directives, then they are dropped, and $patch: delete items go', () => {
    expect(
      stripDirectives({
        $retainKeys: ['a'],
        a: [{ name: 'x', $patch: 'delete' }, { name: 'y' }],
        metadata: { $setElementOrder: 1 },
      }),
    ).toEqual({
      a: [{ name: 'y' }],
      metadata: {},
    });
  });

  test('when JSON patch operations run, then add/remove/replace/move/copy/test behave as RFC 6902', () => {
    const doc = { a: { b: 1 }, list: [1, 2, 3], 'x/y': { '~t': 1 } };
    expect(
      jsonPatch(doc, [
        { op: 'add', path: '/list/-', value: 4 },
        { op: 'add', path: '/list/0', value: 0 },
        { op: 'remove', path: '/list/1' },
        { op: 'replace', path: '/a/b', value: 2 },
        { op: 'move', from: '/a', path: '/moved' },
        { op: 'copy', from: '/moved', path: '/copied' },
        { op: 'test', path: '/x~1y/~0t', value: 1 },
      ]),
    ).toEqual({ list: [0, 2, 3, 4], moved: { b: 2 }, copied: { b: 2 }, 'x/y': { '~t': 1 } });
    expect(doc.list).toEqual([1, 2, 3]);
  });

  test.each([
    [[{ op: 'remove', path: '/missing' }], 422],
    [[{ op: 'test', path: '/a', value: 2 }], 422],
    [[{ op: 'add', path: '/list/9', value: 1 }], 422],
    [[{ op: 'fly', path: '/a' }], 400],
    [[{ op: 'add', path: 'no-slash', value: 1 }], 400],
    [{ op: 'add' }, 400],
  ])('when the JSON patch %j cannot apply, then it is a %i', (operations, code) => {
    expect(() => jsonPatch({ a: 1, list: [] }, operations)).toThrow(expect.objectContaining({ code }));
  });

  test('when a merge patch is not an object, then it is a 400', () => {
    expect(() => applyPatch('application/merge-patch+json', {}, [1])).toThrow(expect.objectContaining({ code: 400 }));
  });
});
