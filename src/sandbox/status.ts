/**
 * kube-apiserver's error answers (`Status`), with the same codes, reasons, messages and details as
 * k8s.io/apimachinery/pkg/api/errors builds them, so clients that branch on `reason` or parse `details` behave the
 * same against the sandbox as against a real cluster.
 */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string };
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code?: number;
}

/** A resource as kube names it in messages: `pods`, `users.iam.kapi.io`. */
export interface GroupResource {
  group: string;
  resource: string;
}

export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
    readonly listMeta: { continue?: string } = {},
  ) {
    super(message);
    this.name = 'StatusError';
  }

  toStatus(): Status {
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.listMeta,
      status: 'Failure',
      message: this.message,
    };
    if (this.reason) status.reason = this.reason;
    if (this.details) status.details = this.details;
    status.code = this.code;
    return status;
  }
}

export function qualifiedResource(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

function resourceDetails(gr: GroupResource, name?: string): StatusDetails {
  const details: StatusDetails = {};
  if (name) details.name = name;
  if (gr.group) details.group = gr.group;
  details.kind = gr.resource;
  return details;
}

export function notFound(gr: GroupResource, name: string): StatusError {
  return new StatusError(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, resourceDetails(gr, name));
}

/** An unknown resource of a served group version: kube's plain "could not find" answer. */
export function pathNotFound(): StatusError {
  return new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
}

/**
 * A path no API serves (an unknown group or version, a non-resource path): Go's http.NotFound, which kube-apiserver
 * answers as text (`404 page not found`), not as a Status.
 */
export class PageNotFound extends StatusError {
  constructor() {
    super(404, 'NotFound', '404 page not found');
  }
}

export function pageNotFound(): StatusError {
  return new PageNotFound();
}

export function alreadyExists(gr: GroupResource, name: string): StatusError {
  return new StatusError(
    409,
    'AlreadyExists',
    `${qualifiedResource(gr)} "${name}" already exists`,
    resourceDetails(gr, name),
  );
}

export function conflict(gr: GroupResource, name: string, why: string): StatusError {
  return new StatusError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`,
    resourceDetails(gr, name),
  );
}

export const MODIFIED_CONFLICT =
  'the object has been modified; please apply your changes to the latest version and try again';

export function badRequest(message: string): StatusError {
  return new StatusError(400, 'BadRequest', message);
}

export function unauthorized(): StatusError {
  return new StatusError(401, 'Unauthorized', 'Unauthorized');
}

/** `nodes "node-1" is forbidden: <why>`, or `forbidden: <why>` for non-resource paths. */
export function forbidden(gr: GroupResource | undefined, name: string | undefined, why: string): StatusError {
  if (!gr || !gr.resource) return new StatusError(403, 'Forbidden', `forbidden: ${why}`, {});
  const subject = name ? `${qualifiedResource(gr)} "${name}"` : qualifiedResource(gr);
  return new StatusError(403, 'Forbidden', `${subject} is forbidden: ${why}`, resourceDetails(gr, name));
}

/**
 * The authorizer's refusal: as `forbidden`, and sent with `X-Content-Type-Options: nosniff` as kube-apiserver's
 * authorization filter does (admission refusals, also 403, are sent without it).
 */
export class AuthorizationDenied extends StatusError {}

export function denied(gr: GroupResource | undefined, name: string | undefined, why: string): StatusError {
  const refusal = forbidden(gr, name, why);
  return new AuthorizationDenied(refusal.code, refusal.reason, refusal.message, refusal.details);
}

export function methodNotAllowed(): StatusError {
  return new StatusError(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
    {},
  );
}

export function expired(message: string, continueToken?: string): StatusError {
  return new StatusError(410, 'Expired', message, undefined, continueToken ? { continue: continueToken } : {});
}

export function unsupportedMediaType(accepted: readonly string[]): StatusError {
  return new StatusError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

/** A patch whose Content-Type is no patch type: kube's bare 415 (NewGenericServerResponse, empty details). */
export function unsupportedPatchType(): StatusError {
  return new StatusError(415, 'UnsupportedMediaType', '415: Unsupported Media Type', {});
}

export function requestEntityTooLarge(limit: number): StatusError {
  return new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
}

/** A query integer Go's strconv.ParseInt refuses, in its words (kube passes them on as a 400). */
export function badInteger(value: string): StatusError {
  return badRequest(`strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`);
}

/** A query boolean Go's strconv.ParseBool refuses. */
export function badBoolean(value: string): StatusError {
  return badRequest(`strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`);
}

export function tooLargeResourceVersion(wanted: number, current: number): StatusError {
  return new StatusError(504, 'Timeout', `Too large resource version: ${wanted}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

export function internalError(message: string): StatusError {
  return new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, {
    causes: [{ message }],
  });
}

/** One field problem, as k8s.io/apimachinery/pkg/util/validation/field.Error renders it. */
export interface FieldError {
  type: 'Invalid' | 'Required' | 'Forbidden' | 'NotSupported' | 'Duplicate' | 'TooLong';
  field: string;
  value?: unknown;
  detail?: string;
}

const FIELD_REASON: Record<FieldError['type'], string> = {
  Invalid: 'FieldValueInvalid',
  Required: 'FieldValueRequired',
  Forbidden: 'FieldValueForbidden',
  NotSupported: 'FieldValueNotSupported',
  Duplicate: 'FieldValueDuplicate',
  TooLong: 'FieldValueTooLong',
};

function fieldErrorBody(error: FieldError): string {
  const detail = error.detail ? `: ${error.detail}` : '';
  switch (error.type) {
    case 'Invalid':
      return `Invalid value: ${JSON.stringify(error.value)}${detail}`;
    case 'Required':
      return `Required value${detail}`;
    case 'Forbidden':
      return `Forbidden${detail}`;
    case 'NotSupported':
      return `Unsupported value: ${JSON.stringify(error.value)}${detail}`;
    case 'Duplicate':
      return `Duplicate value: ${JSON.stringify(error.value)}`;
    case 'TooLong':
      return `Too long${detail}`;
  }
}

const fieldOf = (e: FieldError) => e.field || '[]';

/** Field errors as kube's ErrorList.ToAggregate() prints them: one alone, several in brackets. */
export function fieldErrorsMessage(errors: readonly FieldError[]): string {
  const rendered = errors.map((e) => `${fieldOf(e)}: ${fieldErrorBody(e)}`);
  return rendered.length === 1 ? (rendered[0] as string) : `[${rendered.join(', ')}]`;
}

/**
 * 422 `Invalid`: `ConfigMap "Bad" is invalid: metadata.name: Invalid value: "Bad": ...`. An empty kind is kube's own
 * (its review endpoints name none): `.authorization.k8s.io "" is invalid: …`, details without a kind. An error on no
 * field at all is shown as `[]`, as kube's field.Path renders an empty path.
 */
export function invalid(
  kind: { group: string; kind: string },
  name: string,
  errors: readonly FieldError[],
): StatusError {
  const qualifiedKind = kind.group ? `${kind.kind}.${kind.group}` : kind.kind;
  const summary = fieldErrorsMessage(errors);
  const details: StatusDetails = {};
  if (name) details.name = name;
  if (kind.group) details.group = kind.group;
  if (kind.kind) details.kind = kind.kind;
  details.causes = errors.map((e) => ({ reason: FIELD_REASON[e.type], message: fieldErrorBody(e), field: fieldOf(e) }));
  return new StatusError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${summary}`, details);
}

/** The `Status` a successful delete answers with for kinds that do not return the deleted object. */
export function deletedStatus(gr: GroupResource, name: string, uid: string): Status {
  const details: StatusDetails = { name };
  if (gr.group) details.group = gr.group;
  details.kind = gr.resource;
  details.uid = uid;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}
