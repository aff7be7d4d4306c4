import { describe, expect, test } from '@jest/globals';
import {
  DEFAULT_PLATFORM_ROLE,
  editsAccess,
  newUserFrom,
  specPatchOf,
  statusPatchOf,
  userEditFrom,
  userObject,
} from '../../../src/apis/iam/v1alpha2/user-admin.js';
import { describeRight, rightsOf } from '../../../src/apis/iam/v1alpha2/escalation.js';
import { aggregatedRules, globalRoleRequestFrom } from '../../../src/apis/iam/v1alpha2/global-role-admin.js';
import { ApiError } from '../../../src/server/errors.js';

const POLICY = { minLength: 8 };
const created = (overrides: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'iam.kapi.io/v1alpha2',
  kind: 'User',
  metadata: { name: 'dave', annotations: { 'kapi.io/description': 'ops' }, ...overrides },
  spec: { email: 'dave@example.com', password: 'Dave-Passw0rd', ...spec },
});

/** The field a 400 names (details.causes), or the message of another error. */
function refusal(run: () => unknown): { code: number; field?: string; message: string } {
  try {
    run();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { code: err.code, field: err.details?.causes?.[0]?.field, message: err.message };
  }
  throw new Error('no refusal');
}

describe('newUserFrom', () => {
  test('when the console’s form is posted, then the user has its name, e-mail, description and platform-regular', () => {
    const user = newUserFrom(created(), POLICY);
    expect(user).toEqual({
      name: 'dave',
      email: 'dave@example.com',
      password: 'Dave-Passw0rd',
      annotations: { 'kapi.io/description': 'ops' },
      globalRole: DEFAULT_PLATFORM_ROLE,
    });
  });

  test('when a role is named, and annotations kapi does not set through the API are sent, then only the role and editable ones are kept', () => {
    const user = newUserFrom(
      created({
        annotations: {
          'iam.kapi.io/globalrole': 'platform-admin',
          'iam.kapi.io/uninitialized': 'true',
          'iam.kapi.io/upstream-user-id': 'someone-else',
        },
      }),
      POLICY,
    );
    expect(user.globalRole).toBe('platform-admin');
    expect(user.annotations).toEqual({});
  });

  test.each([
    ['the body is no object', [], undefined, 'the body must be a User'],
    ['the name is missing', created({ name: undefined }), 'metadata.name', 'is required'],
    ['the name has capitals', created({ name: 'Dave' }), 'metadata.name', 'lowercase'],
    ['the name is longer than a label value', created({ name: 'd'.repeat(64) }), 'metadata.name', 'at most 63'],
    ['the e-mail is missing', created({}, { email: undefined }), 'spec.email', 'e-mail address'],
    ['the e-mail has no @', created({}, { email: 'dave.example.com' }), 'spec.email', 'e-mail address'],
    ['the password is missing', created({}, { password: undefined }), 'spec.password', 'is required'],
    ['the password is too short', created({}, { password: 'Sh0rt' }), 'spec.password', 'passwordPolicy.minLength'],
    [
      'the password is the name',
      created({ name: 'dave-passw0rd' }, { password: 'Dave-Passw0rd' }),
      'spec.password',
      'user name',
    ],
    ['the language is no tag', created({}, { lang: 'en us!' }), 'spec.lang', 'language tag'],
    [
      'the role is no name',
      created({ annotations: { 'iam.kapi.io/globalrole': 'Not A Role' } }),
      'metadata.annotations["iam.kapi.io/globalrole"]',
      'GlobalRole',
    ],
  ])('when %s, then 400 names the rule', (_case, body, field, words) => {
    const refused = refusal(() => newUserFrom(body, POLICY));
    expect(refused.code).toBe(400);
    expect(refused.field).toBe(field);
    expect(refused.message).toContain(words);
    expect(refused.message).not.toContain('Dave-Passw0rd');
  });

  test('when the object to store is made, then it carries neither password nor hash, who created it, and kapi’s cleanup finalizer', () => {
    const object = userObject(newUserFrom(created(), POLICY), 'admin');
    expect(object).toEqual({
      apiVersion: 'iam.kapi.io/v1beta1',
      kind: 'User',
      metadata: {
        name: 'dave',
        annotations: { 'kapi.io/description': 'ops', 'kapi.io/creator': 'admin' },
        finalizers: ['finalizers.kapi.io/users'],
      },
      spec: { email: 'dave@example.com' },
    });
  });
});

describe('userEditFrom', () => {
  const answered = {
    apiVersion: 'iam.kapi.io/v1alpha2',
    kind: 'User',
    metadata: {
      name: 'dave',
      resourceVersion: '42',
      annotations: { 'iam.kapi.io/globalrole': 'platform-admin', 'kapi.io/alias-name': 'D' },
    },
    spec: { email: 'dave@example.com', lang: 'zh' },
    status: { state: 'Disabled', lastLoginTime: '2026-11-28T00:00:00Z' },
  };

  test('when the console PUTs the object it read, then every editable field is set and the description it lacks is removed', () => {
    const edit = userEditFrom(answered, 'dave', 'replace');
    expect(edit).toEqual({
      email: 'dave@example.com',
      lang: 'zh',
      annotations: { 'kapi.io/description': null, 'kapi.io/alias-name': 'D' },
      globalRole: 'platform-admin',
      state: 'Disabled',
    });
    expect(editsAccess(edit)).toBe(true);
    expect(specPatchOf(edit)).toEqual({
      spec: { email: 'dave@example.com', lang: 'zh' },
      metadata: { annotations: { 'kapi.io/description': null, 'kapi.io/alias-name': 'D' } },
    });
  });

  test('when a merge patch names the language alone, then only it changes, and no access is touched', () => {
    const edit = userEditFrom({ spec: { lang: 'en' } }, 'dave', 'merge');
    expect(edit).toEqual({ annotations: {}, lang: 'en' });
    expect(editsAccess(edit)).toBe(false);
    expect(specPatchOf(edit)).toEqual({ spec: { lang: 'en' } });
    expect(specPatchOf(userEditFrom({}, 'dave', 'merge'))).toBeUndefined();
  });

  test('when a user locked out comes back unchanged in a PUT, then the lockout is no state asked for', () => {
    const edit = userEditFrom({ ...answered, status: { state: 'AuthLimitExceeded' } }, 'dave', 'replace');
    expect(edit.state).toBeUndefined();
  });

  test.each([
    [
      'the body names another user',
      { ...answered, metadata: { name: 'eve' } },
      'replace',
      'does not match the name on the URL (dave)',
    ],
    ['a PUT names no user', { spec: {} }, 'replace', 'does not match'],
    ['a password is sent', { spec: { password: 'New-Passw0rd' } }, 'merge', '/password'],
    ['the state is unknown', { status: { state: 'Gone' } }, 'merge', 'Active or Disabled'],
    ['an e-mail is bad', { spec: { email: 'no' } }, 'merge', 'e-mail address'],
  ])('when %s, then 400', (_case, body, mode, words) => {
    const refused = refusal(() => userEditFrom(body, 'dave', mode as 'replace' | 'merge'));
    expect(refused.code).toBe(400);
    expect(refused.message).toContain(words);
    expect(refused.message).not.toContain('New-Passw0rd');
  });

  test('when a user is activated, then a lockout ends with it', () => {
    expect(statusPatchOf('Active', 'admin', Date.UTC(2026, 10, 28))).toEqual({
      status: {
        state: 'Active',
        reason: 'activated by admin',
        lastTransitionTime: '2026-11-28T00:00:00Z',
        lockedUntil: null,
      },
    });
    expect(statusPatchOf('Disabled', 'admin', 0).status).not.toHaveProperty('lockedUntil');
  });
});

describe('rightsOf (RBAC’s rule against escalation, as reviews)', () => {
  test.each([
    ['a wildcard rule', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], ['* *.*']],
    [
      'verbs × groups × resources, a subresource among them',
      [{ verbs: ['get', 'list'], apiGroups: ['', 'apps'], resources: ['pods/log'] }],
      ['get pods/log', 'get pods/log.apps', 'list pods/log', 'list pods/log.apps'],
    ],
    [
      'names',
      [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a', 'b'] }],
      ['get configmaps "a"', 'get configmaps "b"'],
    ],
    ['non-resource URLs', [{ verbs: ['get'], nonResourceURLs: ['/metrics', '*'] }], ['get /metrics', 'get *']],
    [
      'a rule repeated',
      [
        { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
        { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
      ],
      ['get pods'],
    ],
    ['no rules (platform-regular)', [], []],
  ])('when a role has %s, then each right is asked once', (_case, rules, rights) => {
    expect(rightsOf(rules).map(describeRight)).toEqual(rights);
  });

  test('when a rule names resources with no group, then the core group is asked', () => {
    expect(rightsOf([{ verbs: ['get'], resources: ['pods'] }])).toEqual([{ verb: 'get', group: '', resource: 'pods' }]);
  });
});

describe('globalRoleRequestFrom', () => {
  const role = (annotations: Record<string, string>, extra: Record<string, unknown> = {}) => ({
    metadata: { name: 'auditor', annotations, ...extra },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  });

  test('when the console sends a role made of templates, then the templates are kept once each and the body’s rules are not used', () => {
    const request = globalRoleRequestFrom(
      role({
        'iam.kapi.io/aggregation-roles': '["role-template-view-users","role-template-view-users"]',
        'kapi.io/description': 'reads users',
      }),
    );
    expect(request).toEqual({
      name: 'auditor',
      templates: ['role-template-view-users'],
      rules: [],
      annotations: {
        'kapi.io/description': 'reads users',
        'iam.kapi.io/aggregation-roles': '["role-template-view-users"]',
      },
    });
  });

  test('when a role names no templates, then its own rules are kept', () => {
    expect(globalRoleRequestFrom(role({})).rules).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]);
  });

  test('when the templates are the sum of their rules, then the role’s rules are theirs in order', () => {
    expect(
      aggregatedRules([
        { rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }] },
        { rules: [{ verbs: [] }, { apiGroups: ['iam.kapi.io'], resources: ['users'], verbs: ['get'] }] },
      ]),
    ).toEqual([
      { apiGroups: [''], resources: ['nodes'], verbs: ['list'] },
      { apiGroups: ['iam.kapi.io'], resources: ['users'], verbs: ['get'] },
    ]);
  });

  test.each([
    ['the body is a list', [], undefined, 'GlobalRole object'],
    ['the name is not the URL’s', role({}), 'other', 'does not match the name on the URL (other)'],
    ['the name is no name', { metadata: { name: 'Not A Name' } }, undefined, 'metadata.name'],
    [
      'the templates are no JSON array',
      role({ 'iam.kapi.io/aggregation-roles': 'view-users' }),
      undefined,
      'JSON array',
    ],
    [
      'it would be a template',
      role({}, { labels: { 'iam.kapi.io/role-template': 'true' } }),
      undefined,
      'not written through this API',
    ],
  ])('when %s, then 400', (_case, body, urlName, words) => {
    const refused = refusal(() => globalRoleRequestFrom(body, urlName));
    expect(refused.code).toBe(400);
    expect(refused.message).toContain(words);
  });
});
