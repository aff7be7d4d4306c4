import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** The authenticated caller, as kube-apiserver's user.Info. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  /** The login session the access token belongs to. */
  sessionId?: string;
  /** The OAuth scopes of an access token from a browser sign-in (space-separated); absent for a password login. */
  scope?: string;
  /**
   * When the session and the user were checked (`performance.now()`, this process's monotonic clock): an end of the
   * session or user seen after it (a logout, an expiry, a user disabled) is not reflected in this identity.
   */
  checkedAt?: number;
}

/** What a request wants to do, in SubjectAccessReview terms. */
export interface ResourceAttributes {
  verb: string;
  resource: string;
  group?: string;
  version?: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** A non-resource URL (`/healthz`, `/metrics`…): the review asks about it, with `verb`, instead of a resource. */
  path?: string;
  /**
   * Ask the cluster now, never answer from a decision of the last seconds: a workspace or project membership, which
   * must end for kapi as soon as kube-apiserver's RBAC has ended it.
   */
  fresh?: boolean;
}

export interface AccessDecision {
  allowed: boolean;
  reason?: string;
}

export interface Authorizer {
  authorize(user: UserInfo, attributes: ResourceAttributes): Promise<AccessDecision>;
}

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by the authentication middleware on every non-public request. */
    user?: UserInfo;
  }
}

/** Builds the middleware a route uses to demand an access right; features receive it and never see the authorizer. */
export type AccessGuard = (attributes: ResourceAttributes | ((req: Request) => ResourceAttributes)) => RequestHandler;

/** Until identity is configured (tests of features alone), every request passes. */
export const allowAll: AccessGuard = () => (_req: Request, _res: Response, next: NextFunction) => next();
