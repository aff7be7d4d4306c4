import { describe, expect, test } from '@jest/globals';
import {
  deletesNamespaces,
  workspaceEditFrom,
  workspaceRequestFrom,
} from '../../../src/apis/tenant/workspace-admin.js';
import { ApiError } from '../../../src/server/errors.js';

function refusal(run: () => unknown): { code: number; field?: string; message: string } {
  try {
    run();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { code: err.code, field: err.details?.causes?.[0]?.field, message: err.message };
  }
  throw new Error('no refusal');
}

describe('workspaceRequestFrom', () => {
  test('when the console’s form is posted, then the name, the manager and the editable annotations are taken', () => {
    expect(
      workspaceRequestFrom({
        apiVersion: 'tenant.kapi.io/v1alpha2',
        kind: 'WorkspaceTemplate',
        metadata: {
          name: 'ws-a',
          annotations: { 'kapi.io/alias-name': 'A', 'kapi.io/description': 'team a', 'kapi.io/creator': 'forged' },
        },
        spec: { template: { spec: { manager: 'alice' }, metadata: { annotations: { 'kapi.io/creator': 'x' } } } },
      }),
    ).toEqual({
      name: 'ws-a',
      manager: 'alice',
      annotations: { 'kapi.io/alias-name': 'A', 'kapi.io/description': 'team a' },
    });
  });

  test('when no manager is named, then none is asked for (the caller manages it)', () => {
    expect(workspaceRequestFrom({ metadata: { name: 'ws-b' }, spec: {} })).toEqual({ name: 'ws-b', annotations: {} });
  });

  test.each([
    ['the body is a list', [], undefined],
    ['the name has a dot (no label value of a namespace)', { metadata: { name: 'ws.a' } }, 'metadata.name'],
    ['the name is longer than a label value', { metadata: { name: 'w'.repeat(64) } }, 'metadata.name'],
    [
      'the manager is no name',
      { metadata: { name: 'ws' }, spec: { template: { spec: { manager: 'A B' } } } },
      'spec.template.spec.manager',
    ],
  ])('when %s, then 400', (_case, body, field) => {
    const refused = refusal(() => workspaceRequestFrom(body));
    expect(refused.code).toBe(400);
    expect(refused.field).toBe(field);
  });
});

describe('workspaceEditFrom', () => {
  test('when the console sends its JSON patch, then the annotations (absent ones removed) and the manager are the change', () => {
    expect(
      workspaceEditFrom([
        { op: 'add', path: '/metadata/annotations', value: { 'kapi.io/description': 'new' } },
        { op: 'add', path: '/spec', value: { template: { spec: { manager: 'bob' } } } },
      ]),
    ).toEqual({ annotations: { 'kapi.io/description': 'new', 'kapi.io/alias-name': null }, manager: 'bob' });
  });

  test('when a merge patch names the manager alone, then only it changes', () => {
    expect(workspaceEditFrom({ spec: { template: { spec: { manager: 'bob' } } } })).toEqual({ manager: 'bob' });
  });

  test.each([
    ['an operation removes', [{ op: 'remove', path: '/spec' }], 'add or replace'],
    [
      'an operation reaches elsewhere',
      [{ op: 'add', path: '/metadata/labels', value: {} }],
      '/metadata/annotations or /spec',
    ],
    ['the body is a string', 'x', 'JSON patch or a merge patch'],
  ])('when %s, then 400', (_case, body, words) => {
    const refused = refusal(() => workspaceEditFrom(body));
    expect(refused.code).toBe(400);
    expect(refused.message).toContain(words);
  });
});

describe('deletesNamespaces (KubeSphere 4.1: kept unless asked)', () => {
  test.each([
    ['no body', undefined, false],
    ['an empty body (the console’s ticked box in 3.4)', {}, false],
    ['Orphan', { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Orphan' }, false],
    ['Background', { propagationPolicy: 'Background' }, true],
    ['Foreground', { propagationPolicy: 'Foreground' }, true],
  ])('when the body is %s, then namespaces are deleted: %s', (_case, body, deleted) => {
    expect(deletesNamespaces(body)).toBe(deleted);
  });

  test('when the policy is unknown, then 400 names it', () => {
    expect(refusal(() => deletesNamespaces({ propagationPolicy: 'All' })).field).toBe('propagationPolicy');
  });
});
