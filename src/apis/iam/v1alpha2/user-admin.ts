import { USER_FINALIZER } from '../../../controllers/users/user-cleanup.js';
import type { PasswordPolicy } from '../../../config/account-settings.js';
import { passwordProblem } from '../../../auth/account/password-policy.js';
import { isObjectName } from '../../../auth/kube-names.js';
import { BadRequestError, InvalidParameterError } from '../../../server/errors.js';
import { GLOBAL_ROLE_ANNOTATION, USER_REF_LABEL } from './role-templates.js';

/**
 * Users administered over `iam.kapi.io/v1alpha2` (SPEC §17), pure: what a request body asks for, checked, and the
 * objects written for it. A body is KubeSphere 3.4's User as its console sends it; what it may set is narrower than
 * the object: e-mail, language, description and alias, state (Active/Disabled) and the platform role. A password is
 * set at creation and by the password route only; groups (impersonated at kube-apiserver, so rights) and the links
 * to identity providers stay with whoever may write Users directly (`kubectl`, cluster-admin).
 */

export const DESCRIPTION_ANNOTATION = 'kapi.io/description';
export const ALIAS_ANNOTATION = 'kapi.io/alias-name';
/** Annotations a user's administrator may set and remove through the API. */
export const EDITABLE_ANNOTATIONS: readonly string[] = [DESCRIPTION_ANNOTATION, ALIAS_ANNOTATION];
/** A new user's platform role when the request names none (SPEC §17). */
export const DEFAULT_PLATFORM_ROLE = 'platform-regular';
/** Users are named in the `iam.kapi.io/user-ref` label of their bindings: a label value is at most 63 characters. */
export const MAX_USER_NAME_LENGTH = 63;
const MAX_ANNOTATION_LENGTH = 1024;
/** The User CRD's own rule for `spec.email`, so that nothing accepted here is refused by kube-apiserver. */
const EMAIL = /^[^@\s]+@[^@\s]+$/;
const LANG = /^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*$/;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export interface NewUser {
  name: string;
  email: string;
  password: string;
  lang?: string;
  annotations: Record<string, string>;
  globalRole: string;
}

export type UserState = 'Active' | 'Disabled';

/** A change to a user: only what the body sets (`null`: remove). */
export interface UserEdit {
  email?: string;
  lang?: string | null;
  annotations: Record<string, string | null>;
  globalRole?: string;
  state?: UserState;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function objectBody(body: unknown): Raw {
  if (!isObject(body)) throw new BadRequestError('the body must be a User object (metadata, spec)');
  for (const part of ['metadata', 'spec', 'status'] as const) {
    if (body[part] !== undefined && body[part] !== null && !isObject(body[part]))
      throw new InvalidParameterError(part, 'must be an object');
  }
  return body;
}

function emailOf(value: unknown): string {
  if (typeof value !== 'string' || value.length < 3 || value.length > 254 || !EMAIL.test(value))
    throw new InvalidParameterError('spec.email', 'must be an e-mail address (name@domain, at most 254 characters)');
  return value;
}

function langOf(value: unknown): string | null | undefined {
  if (value === undefined || value === null || value === '') return value === undefined ? undefined : null;
  if (typeof value !== 'string' || value.length > 35 || !LANG.test(value))
    throw new InvalidParameterError('spec.lang', 'must be a language tag such as en or zh-CN');
  return value;
}

function roleOf(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || !isObjectName(value))
    throw new InvalidParameterError(`metadata.annotations["${GLOBAL_ROLE_ANNOTATION}"]`, 'must name a GlobalRole');
  return value;
}

/** The editable annotations `annotations` sets; with `removeAbsent`, the editable ones it lacks are removed. */
function editableAnnotations(annotations: unknown, removeAbsent: boolean): Record<string, string | null> {
  if (annotations !== undefined && annotations !== null && !isObject(annotations))
    throw new InvalidParameterError('metadata.annotations', 'must be an object of strings');
  const given = (annotations ?? {}) as Record<string, unknown>;
  const edits: Record<string, string | null> = {};
  for (const key of EDITABLE_ANNOTATIONS) {
    const value = given[key];
    if (value === undefined) {
      if (removeAbsent) edits[key] = null;
    } else if (value === null || value === '') edits[key] = null;
    else if (typeof value !== 'string' || value.length > MAX_ANNOTATION_LENGTH)
      throw new InvalidParameterError(
        `metadata.annotations["${key}"]`,
        `must be a string of at most ${MAX_ANNOTATION_LENGTH} characters`,
      );
    else edits[key] = value;
  }
  return edits;
}

export function userNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name === '') return 'is required';
  if (!isObjectName(name) || name.length > MAX_USER_NAME_LENGTH || name.includes('.'))
    return `must be at most ${MAX_USER_NAME_LENGTH} lowercase letters, digits and '-', starting and ending with a letter or digit`;
  return undefined;
}

/** A user to create, from `POST …/users`: name, e-mail and password required; the role defaults to platform-regular. */
export function newUserFrom(body: unknown, policy: PasswordPolicy): NewUser {
  const object = objectBody(body);
  const name = object.metadata?.name;
  const nameProblem = userNameProblem(name);
  if (nameProblem) throw new InvalidParameterError('metadata.name', nameProblem);
  const spec = object.spec ?? {};
  const email = emailOf(spec.email);
  if (typeof spec.password !== 'string' || spec.password === '')
    throw new InvalidParameterError('spec.password', 'is required (the new user’s password, in clear: kapi hashes it)');
  const problem = passwordProblem(spec.password, name, policy);
  if (problem) throw new InvalidParameterError('spec.password', problem);
  const lang = langOf(spec.lang);
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(editableAnnotations(object.metadata?.annotations, false))) {
    if (value !== null) annotations[key] = value;
  }
  return {
    name,
    email,
    password: spec.password,
    ...(lang ? { lang } : {}),
    annotations,
    globalRole: roleOf(object.metadata?.annotations?.[GLOBAL_ROLE_ANNOTATION]) ?? DEFAULT_PLATFORM_ROLE,
  };
}

/**
 * A change to user `name` from `PUT` (`replace`: the whole editable part; an editable annotation left out is removed)
 * or a merge `PATCH` (what it names). The body's name, when given, is the URL's; a password is refused here (the
 * password route checks the caller's current one).
 */
export function userEditFrom(body: unknown, name: string, mode: 'replace' | 'merge'): UserEdit {
  const object = objectBody(body);
  const bodyName = object.metadata?.name;
  if (mode === 'replace' ? bodyName !== name : bodyName !== undefined && bodyName !== name)
    throw new BadRequestError(
      `the name of the object (${typeof bodyName === 'string' ? bodyName : 'none'}) does not match the name on the URL (${name})`,
    );
  const spec = object.spec ?? {};
  if (spec.password !== undefined && spec.password !== null && spec.password !== '')
    throw new InvalidParameterError('spec.password', `is changed by PUT …/users/${name}/password, not here`);
  const edit: UserEdit = {
    annotations: editableAnnotations(object.metadata?.annotations, mode === 'replace'),
  };
  if (spec.email !== undefined) edit.email = emailOf(spec.email);
  const lang = langOf(spec.lang);
  if (lang !== undefined || mode === 'replace') edit.lang = lang ?? null;
  const role = roleOf(object.metadata?.annotations?.[GLOBAL_ROLE_ANNOTATION]);
  if (role) edit.globalRole = role;
  const state = object.status?.state;
  if (state === 'Active' || state === 'Disabled') edit.state = state;
  // what an answer carried (a lockout) may come back unchanged; anything else is no state of a user
  else if (state !== undefined && state !== null && state !== 'AuthLimitExceeded')
    throw new InvalidParameterError('status.state', 'must be Active or Disabled');
  return edit;
}

/** Whether a change touches more than one's own profile (e-mail, language, description, alias). */
export function editsAccess(edit: UserEdit): boolean {
  return edit.globalRole !== undefined || edit.state !== undefined;
}

/**
 * The User to create: no password in it (its hash goes to the user's password Secret), and kapi's cleanup finalizer,
 * so that however it is deleted, what it leaves goes with it.
 */
export function userObject(user: NewUser, creator: string): Record<string, unknown> {
  return {
    apiVersion: 'iam.kapi.io/v1beta1',
    kind: 'User',
    metadata: {
      name: user.name,
      annotations: { ...user.annotations, 'kapi.io/creator': creator },
      finalizers: [USER_FINALIZER],
    },
    spec: { email: user.email, ...(user.lang ? { lang: user.lang } : {}) },
  };
}

/** The merge patch of the User's own fields for `edit`; undefined when it changes none of them. */
export function specPatchOf(edit: UserEdit): Record<string, unknown> | undefined {
  const spec: Record<string, unknown> = {};
  if (edit.email !== undefined) spec.email = edit.email;
  if (edit.lang !== undefined) spec.lang = edit.lang;
  const patch: Record<string, unknown> = {};
  if (Object.keys(spec).length > 0) patch.spec = spec;
  if (Object.keys(edit.annotations).length > 0) patch.metadata = { annotations: edit.annotations };
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/** The merge patch of the User's status for a new state (a lockout ends when an administrator activates the user). */
export function statusPatchOf(state: UserState, by: string, nowMs: number): Record<string, unknown> {
  return {
    status: {
      state,
      reason: state === 'Disabled' ? `disabled by ${by}` : `activated by ${by}`,
      lastTransitionTime: new Date(nowMs).toISOString().replace(/\.\d+Z$/, 'Z'),
      ...(state === 'Active' ? { lockedUntil: null } : {}),
    },
  };
}

/** The label selector of every binding kapi or an administrator labelled as this user's (`iam.kapi.io/user-ref`). */
export const userRefSelector = (user: string) => `${USER_REF_LABEL}=${user}`;
