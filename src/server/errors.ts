/**
 * Typed errors and the Kubernetes `Status` body they become. Only the error handler turns an error into a
 * response; features throw these and never write error bodies themselves.
 */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: string;
  details?: { name?: string; kind?: string; group?: string; causes?: StatusCause[]; retryAfterSeconds?: number };
  code: number;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: KubeStatus['details'],
  ) {
    super(message);
    this.name = new.target.name;
  }

  toStatus(): KubeStatus {
    return statusBody(this.code, this.reason, this.message, this.details);
  }
}

export class BadRequestError extends ApiError {
  constructor(message: string, details?: KubeStatus['details']) {
    super(400, 'BadRequest', message, details);
  }
}

/** A query or body parameter with a bad value: the message and `details.causes` name the parameter. */
export class InvalidParameterError extends BadRequestError {
  constructor(
    readonly parameter: string,
    problem: string,
  ) {
    super(`invalid value for parameter "${parameter}": ${problem}`, {
      causes: [{ reason: 'FieldValueInvalid', field: parameter, message: problem }],
    });
  }
}

export class UnauthorizedError extends ApiError {
  constructor(message = 'Unauthorized') {
    super(401, 'Unauthorized', message);
  }
}

export class ForbiddenError extends ApiError {
  constructor(message: string, details?: KubeStatus['details']) {
    super(403, 'Forbidden', message, details);
  }
}

export class NotFoundError extends ApiError {
  constructor(message: string, details?: KubeStatus['details']) {
    super(404, 'NotFound', message, details);
  }
}

/** A limit on concurrent work was reached: try again after `retryAfterSeconds` (the Retry-After header). */
export class TooManyRequestsError extends ApiError {
  constructor(message: string, retryAfterSeconds: number) {
    super(429, 'TooManyRequests', message, { retryAfterSeconds });
  }
}

export class ServiceUnavailableError extends ApiError {
  /** `retryAfterSeconds`: sent as `Retry-After` and in the Status details, as kube-apiserver does. */
  constructor(message: string, retryAfterSeconds?: number) {
    super(503, 'ServiceUnavailable', message, retryAfterSeconds ? { retryAfterSeconds } : undefined);
  }
}

export function statusBody(code: number, reason: string, message: string, details?: KubeStatus['details']): KubeStatus {
  const body: KubeStatus = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
  if (details) body.details = details;
  return body;
}

/** Reasons kube-apiserver uses for the plain HTTP codes, for errors raised outside our own classes. */
export function reasonForCode(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 408:
      return 'Timeout';
    case 409:
      return 'Conflict';
    case 410:
      return 'Expired';
    case 413:
      return 'RequestEntityTooLarge';
    case 415:
      return 'UnsupportedMediaType';
    case 429:
      return 'TooManyRequests';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return code >= 500 ? 'InternalError' : 'BadRequest';
  }
}

/**
 * kube-apiserver answered 401 to a request kapi made or forwarded. It never sees a caller's token (kapi authenticates
 * as itself and impersonates the caller), so the credentials it refused are kapi's own: kapi's fault, told as such, so that
 * kubectl and client-go do not blame the caller's token.
 */
export function credentialsRefused(): ApiError {
  return new ServiceUnavailableError(
    'kube-apiserver refused kapi-apiserver’s own credentials (its service account token); your credentials are not ' +
      'in question. kapi reads its credentials again; if this persists, an administrator must check its token',
    5,
  );
}
