import type { SandboxUser } from './identity.js';
import type { AccessAttributes, Authorizer, PolicyDecision } from './policy.js';
import { badRequest, invalid, type FieldError } from './status.js';

/**
 * The review APIs, answered by the sandbox's authorizer (the same decision every request gets): SubjectAccessReview (can user X do Y?), LocalSubjectAccessReview,
 * SelfSubjectAccessReview (can I?), SelfSubjectRulesReview (what can I do here?, `kubectl auth can-i --list`) and
 * SelfSubjectReview (who am I?, `kubectl auth whoami`). Each answers the posted object with a status, as kube does.
 */
type Obj = Record<string, unknown>;
/**
 * kube names the kind of an invalid review by its decoded TypeMeta, which decoding leaves empty: the message reads
 * `.authorization.k8s.io "" is invalid: …` and the details name no kind. The sandbox says the same.
 */
const REVIEW_KIND_IN_ERRORS = '';

const record = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

export interface ReviewContext {
  caller: SandboxUser;
  /** The URL namespace (LocalSubjectAccessReview). */
  namespace: string;
  authorizer: Authorizer;
}

function attributesOf(spec: Obj, errors: FieldError[]): AccessAttributes | undefined {
  const resource = spec.resourceAttributes === undefined ? undefined : record(spec.resourceAttributes);
  const nonResource = spec.nonResourceAttributes === undefined ? undefined : record(spec.nonResourceAttributes);
  if (resource && nonResource) {
    errors.push({
      type: 'Invalid',
      field: 'spec.nonResourceAttributes',
      value: spec.nonResourceAttributes,
      detail: 'cannot be specified in combination with resourceAttributes',
    });
    return undefined;
  }
  if (!resource && !nonResource) {
    errors.push({
      type: 'Invalid',
      field: 'spec.resourceAttributes',
      value: 'null',
      detail: 'exactly one of nonResourceAttributes or resourceAttributes must be specified',
    });
    return undefined;
  }
  if (nonResource) return { verb: String(nonResource.verb ?? ''), path: String(nonResource.path ?? '') };
  const r = resource as Obj;
  const attributes: AccessAttributes = {
    verb: String(r.verb ?? ''),
    apiGroup: String(r.group ?? ''),
    resource: String(r.resource ?? ''),
  };
  if (r.subresource) attributes.subresource = String(r.subresource);
  if (r.namespace) attributes.namespace = String(r.namespace);
  if (r.name) attributes.name = String(r.name);
  return attributes;
}

function reviewBody(kind: string, body: Obj): Obj {
  const metadata = { ...record(body.metadata), creationTimestamp: null };
  return { kind, apiVersion: 'authorization.k8s.io/v1', metadata, spec: record(body.spec) };
}

function answer(kind: string, body: Obj, decision: PolicyDecision): Obj {
  const status: Obj = { allowed: decision.allowed };
  if (decision.reason) status.reason = decision.reason;
  return { ...reviewBody(kind, body), status };
}

function checkKind(body: Obj, kind: string, apiVersion: string): void {
  if (body.kind !== undefined && body.kind !== kind) {
    throw badRequest(
      `the kind in the request body (${String(body.kind)}) does not match the kind of the endpoint (${kind})`,
    );
  }
  if (body.apiVersion !== undefined && body.apiVersion !== apiVersion) {
    throw badRequest(
      `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${apiVersion})`,
    );
  }
}

export function subjectAccessReview(body: Obj, ctx: ReviewContext, local: boolean): Obj {
  const kind = local ? 'LocalSubjectAccessReview' : 'SubjectAccessReview';
  checkKind(body, kind, 'authorization.k8s.io/v1');
  const spec = record(body.spec);
  const errors: FieldError[] = [];
  const attributes = attributesOf(spec, errors);
  const user = typeof spec.user === 'string' ? spec.user : '';
  const groups = Array.isArray(spec.groups) ? spec.groups.map(String) : [];
  if (!user && groups.length === 0) {
    errors.push({
      type: 'Invalid',
      field: 'spec.user',
      value: '',
      detail: 'at least one of user or group must be specified',
    });
  }
  if (local && attributes && attributes.resource !== undefined && attributes.namespace !== ctx.namespace) {
    errors.push({
      type: 'Invalid',
      field: 'spec.resourceAttributes.namespace',
      value: attributes.namespace ?? '',
      detail: 'must match metadata.namespace',
    });
  }
  if (errors.length || !attributes)
    throw invalid({ group: 'authorization.k8s.io', kind: REVIEW_KIND_IN_ERRORS }, '', errors);
  const subject: SandboxUser = { username: user, groups };
  if (typeof spec.uid === 'string') subject.uid = spec.uid;
  const reviewed = answer(kind, body, ctx.authorizer.decide(subject, attributes));
  if (local) (reviewed.metadata as Obj).namespace = ctx.namespace;
  return reviewed;
}

export function selfSubjectAccessReview(body: Obj, ctx: ReviewContext): Obj {
  const kind = 'SelfSubjectAccessReview';
  checkKind(body, kind, 'authorization.k8s.io/v1');
  const errors: FieldError[] = [];
  const attributes = attributesOf(record(body.spec), errors);
  if (errors.length || !attributes)
    throw invalid({ group: 'authorization.k8s.io', kind: REVIEW_KIND_IN_ERRORS }, '', errors);
  return answer(kind, body, ctx.authorizer.decide(ctx.caller, attributes));
}

/** The rules that apply to the caller in a namespace, flattened as kube's rule resolver reports them. */
export function selfSubjectRulesReview(body: Obj, ctx: ReviewContext): Obj {
  const kind = 'SelfSubjectRulesReview';
  checkKind(body, kind, 'authorization.k8s.io/v1');
  const namespace = String(record(body.spec).namespace ?? '');
  if (!namespace) {
    throw invalid({ group: 'authorization.k8s.io', kind: REVIEW_KIND_IN_ERRORS }, '', [
      { type: 'Required', field: 'spec.namespace' },
    ]);
  }
  const rules = ctx.authorizer.rulesFor(ctx.caller, namespace);
  const status: Obj = {
    resourceRules: rules.resourceRules,
    nonResourceRules: rules.nonResourceRules,
    incomplete: rules.incomplete,
  };
  // kube aggregates the rule resolver's errors: one message alone, several as "[a, b]".
  if (rules.evaluationErrors.length === 1) status.evaluationError = rules.evaluationErrors[0];
  else if (rules.evaluationErrors.length > 1) status.evaluationError = `[${rules.evaluationErrors.join(', ')}]`;
  return { ...reviewBody(kind, body), status };
}

/** `version`: the one the request was made at (v1, v1beta1 or v1alpha1, as the release the sandbox plays serves). */
export function selfSubjectReview(body: Obj, caller: SandboxUser, version = 'v1'): Obj {
  const apiVersion = `authentication.k8s.io/${version}`;
  checkKind(body, 'SelfSubjectReview', apiVersion);
  const userInfo: Obj = { username: caller.username };
  if (caller.uid) userInfo.uid = caller.uid;
  userInfo.groups = caller.groups;
  if (caller.extra) userInfo.extra = caller.extra;
  return {
    kind: 'SelfSubjectReview',
    apiVersion,
    metadata: { ...record(body.metadata), creationTimestamp: null },
    status: { userInfo },
  };
}
