import { describe, expect, it } from '@jest/globals';
import { userStateFrom, workFor } from '../../../src/controllers/users/controller.js';
import {
  USER_FINALIZER,
  finalizerAddition,
  finalizerRemoval,
  managedBy,
  managerRemoval,
} from '../../../src/controllers/users/user-cleanup.js';
import { hashRemovalPatch } from '../../../src/auth/users/users.js';
import {
  hashBelongsTo,
  passwordSecret,
  passwordSecretName,
  storedHashFrom,
} from '../../../src/auth/users/password-hashes.js';

const HASH = '$2b$10$abcdefghijklmnopqrstuuJ3wNO4h4PbaWkP0sXTDY2dfkWGhPWpK';
const user = (metadata: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({
  metadata: { name: 'frank', uid: 'u1', resourceVersion: '5', ...metadata },
  spec: { email: 'f@x', ...spec },
});

describe('what kapi does for a User', () => {
  it.each([
    ['a User applied without kapi’s finalizer', user(), 'finalize'],
    ['a User with it and nothing exposed', user({ finalizers: [USER_FINALIZER] }), 'none'],
    ['a User with a hash in its spec', user({ finalizers: [USER_FINALIZER] }, { password: HASH }), 'move-hash'],
    [
      'a User whose kubectl copy holds a hash',
      user({
        finalizers: [USER_FINALIZER],
        annotations: {
          'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ spec: { password: HASH } }),
        },
      }),
      'move-hash',
    ],
    [
      'a User being deleted, its cleanup pending',
      user({ finalizers: [USER_FINALIZER], deletionTimestamp: 'x' }),
      'clean-up',
    ],
    [
      'a User being deleted for someone else’s finalizer',
      user({ finalizers: ['other'], deletionTimestamp: 'x' }),
      'none',
    ],
  ])('when %s, then the work is %s', (_what, raw, work) => {
    expect(workFor(userStateFrom(raw))).toBe(work);
  });

  it('when the finalizer is added or removed, then the patch is conditional on the version read and keeps others’', () => {
    expect(finalizerAddition(user())).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      { op: 'add', path: '/metadata/finalizers', value: [USER_FINALIZER] },
    ]);
    expect(finalizerAddition(user({ finalizers: ['other'] }))?.[1]).toEqual({
      op: 'add',
      path: '/metadata/finalizers/-',
      value: USER_FINALIZER,
    });
    expect(finalizerAddition(user({ finalizers: [USER_FINALIZER] }))).toBeUndefined();
    expect(finalizerRemoval(user({ finalizers: ['other', USER_FINALIZER] }))?.[1]).toEqual({
      op: 'remove',
      path: '/metadata/finalizers/1',
    });
    expect(finalizerRemoval(user({ finalizers: ['other'] }))).toBeUndefined();
  });

  it('when a deleted user managed workspaces, then exactly those lose their manager, conditionally', () => {
    const templates = [
      { metadata: { name: 'a', resourceVersion: '1' }, spec: { template: { spec: { manager: 'frank' } } } },
      { metadata: { name: 'b', resourceVersion: '2' }, spec: { template: { spec: { manager: 'frankie' } } } },
      { metadata: { name: 'c', resourceVersion: '3' }, spec: {} },
    ];
    expect(managedBy(templates, 'frank').map((t) => t.metadata.name)).toEqual(['a']);
    expect(managerRemoval(templates[0])).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '1' },
      { op: 'remove', path: '/spec/template/spec/manager' },
    ]);
  });

  it('when a hash is taken out of a User, then spec.password goes and kubectl’s copy keeps everything but it', () => {
    const applied = JSON.stringify({ kind: 'User', spec: { email: 'f@x', password: HASH } });
    const patch = hashRemovalPatch(
      user({ annotations: { 'kubectl.kubernetes.io/last-applied-configuration': applied } }, { password: HASH }),
    );
    expect(patch).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      { op: 'remove', path: '/spec/password' },
      {
        op: 'replace',
        path: '/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration',
        value: JSON.stringify({ kind: 'User', spec: { email: 'f@x' } }),
      },
    ]);
    expect(hashRemovalPatch(user())).toBeUndefined();
    expect(JSON.stringify(patch)).not.toContain(HASH);
  });
});

describe('password Secrets', () => {
  it('when a hash is stored, then it is read back for that User only: not for a new User of the same name', () => {
    const secret = passwordSecret('kapi-system', 'frank', 'u1', HASH);
    const stored = storedHashFrom(secret);
    expect(stored).toEqual({ user: 'frank', userUid: 'u1', hash: HASH });
    expect(hashBelongsTo(stored, { name: 'frank', uid: 'u1' })).toBe(true);
    expect(hashBelongsTo(stored, { name: 'frank', uid: 'u2' })).toBe(false);
    expect(hashBelongsTo(stored, { name: 'frankie', uid: 'u1' })).toBe(false);
    expect(secret).toMatchObject({
      type: 'iam.kapi.io/password',
      metadata: { name: 'password-frank', namespace: 'kapi-system', labels: { 'iam.kapi.io/password': 'bcrypt' } },
    });
  });

  it('when a Secret holds no bcrypt hash or names no user, then it is no password', () => {
    const secret = passwordSecret('kapi-system', 'frank', 'u1', HASH) as { data: Record<string, string> };
    expect(storedHashFrom({ ...secret, data: { bcrypt: Buffer.from('plain').toString('base64') } })).toBeUndefined();
    expect(storedHashFrom({ ...secret, metadata: {} })).toBeUndefined();
  });

  it('when a user’s name is too long for the Secret’s, then a digest of it is used', () => {
    expect(passwordSecretName('frank')).toBe('password-frank');
    const long = passwordSecretName('a'.repeat(250));
    expect(long).toMatch(/^password-[0-9a-f]{40}$/);
  });
});
