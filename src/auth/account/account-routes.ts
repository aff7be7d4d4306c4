import express, { Router, type NextFunction, type Request, type Response } from 'express';
import {
  ApiError,
  BadRequestError,
  ForbiddenError,
  InvalidParameterError,
  NotFoundError,
} from '../../server/errors.js';
import { expressPath, mountOperation } from '../../openapi/operation.js';
import { parseQuery } from '../../openapi/query-parameters.js';
import type { UserInfo } from '../identity.js';
import { kubeSphereLoginRecord, recordObject, type LoginRecord } from '../login-records/login-record.js';
import type { LoginRecords } from '../login-records/login-records.js';
import {
  ACCOUNT_BODY_LIMIT_BYTES,
  changeUserPassword,
  changeUserPasswordV1alpha2,
  listLoginRecords,
  listUserLoginRecords,
} from './operations.js';
import { changePassword, type PasswordChange, type PasswordChangeDeps } from './password-change.js';

export type AccountRouteDeps = PasswordChangeDeps & {
  /** Where login records are read; none: the records operation answers 404 for everyone. */
  loginRecords?: LoginRecords;
};

/**
 * The account API under /kapis/iam.kapi.io/v1beta1, mounted after authentication (`req.user` is set). Answers are
 * Kubernetes `Status` errors; no body or message ever repeats a submitted password.
 */
export function accountRoutes(deps: AccountRouteDeps): Router {
  const router = Router();
  const sourceIp = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';
  for (const operation of [changeUserPassword, changeUserPasswordV1alpha2]) {
    mountOperation(router, '', operation, jsonBody, (req, res, next) => {
      const change = passwordChangeOf(req.body);
      const name = String(req.params['name']);
      changePassword(deps, req.user!, name, change, sourceIp(req)).then(
        (changed) => res.status(200).json(changed),
        next,
      );
    });
    router.all(expressPath(operation.path), allow('PUT'));
  }

  mountOperation(router, '', listLoginRecords, (req, res, next) => {
    const query = parseQuery(listLoginRecords.query, req.query as Record<string, unknown>);
    readLoginRecords(deps, req.user!, String(req.params['name'])).then((records) => {
      res.json({
        items: records.slice(0, query.limit ?? records.length).map(recordObject),
        totalItems: records.length,
      });
    }, next);
  });
  // KubeSphere 3.4's shape and paging, for its console's login history
  mountOperation(router, '', listUserLoginRecords, (req, res, next) => {
    const query = parseQuery(listUserLoginRecords.query, req.query as Record<string, unknown>);
    const name = String(req.params['name']);
    readLoginRecords(deps, req.user!, name).then((records) => {
      const limit = query.limit === undefined || query.limit === -1 ? records.length : query.limit;
      const start = limit === 0 ? 0 : ((query.page ?? 1) - 1) * limit;
      res.json({
        items: records.slice(start, start + limit).map((record) => kubeSphereLoginRecord(name, record)),
        totalItems: records.length,
      });
    }, next);
  });
  for (const operation of [listLoginRecords, listUserLoginRecords])
    router.all(expressPath(operation.path), allow('GET'));
  return router;
}

/**
 * Users read their own records; anyone else needs `get` on `users/loginrecords` (403 before any 404, so the answer
 * tells nobody which users exist).
 */
async function readLoginRecords(deps: AccountRouteDeps, caller: UserInfo, name: string): Promise<LoginRecord[]> {
  if (caller.username !== name) {
    const decision = await deps.authorizer.authorize(caller, {
      verb: 'get',
      group: 'iam.kapi.io',
      resource: 'users',
      subresource: 'loginrecords',
      name,
    });
    if (!decision.allowed) {
      throw new ForbiddenError(
        `users.iam.kapi.io "${name}" is forbidden: User "${caller.username}" cannot get resource "users/loginrecords" in API group "iam.kapi.io" at the cluster scope`,
        { name, group: 'iam.kapi.io', kind: 'users' },
      );
    }
  }
  const user = await deps.users.get(name);
  if (!user || !deps.loginRecords) {
    throw new NotFoundError(`users.iam.kapi.io "${name}" not found`, { name, group: 'iam.kapi.io', kind: 'users' });
  }
  return deps.loginRecords.read(name);
}

function allow(methods: string) {
  return (req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Allow', methods);
    next(new ApiError(405, 'MethodNotAllowed', `use ${methods} (${req.method} ${req.originalUrl.split('?')[0]})`));
  };
}

/** A middleware reading an `application/json` body of at most `limitBytes` into `req.body` (415, 413, 400 else). */
export function jsonBodyOf(limitBytes: number) {
  const readBody = express.raw({ type: () => true, limit: limitBytes });
  return (req: Request, res: Response, next: NextFunction): void => {
    const type = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') {
      next(new ApiError(415, 'UnsupportedMediaType', 'the body must be application/json'));
      return;
    }
    readBody(req, res, (err?: unknown) => {
      if (err) {
        const status = (err as { status?: unknown }).status;
        next(
          status === 413
            ? new ApiError(413, 'RequestEntityTooLarge', `the body is larger than ${limitBytes} bytes`)
            : new BadRequestError('the request body could not be read'),
        );
        return;
      }
      try {
        req.body = JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '') as unknown;
        next();
      } catch {
        next(new BadRequestError('the body is not valid JSON'));
      }
    });
  };
}

/**
 * An application/json body, at most 16 KiB, parsed here: body-parser's own JSON errors quote the text they could not
 * read, which may be a password.
 */
export const jsonBody = jsonBodyOf(ACCOUNT_BODY_LIMIT_BYTES);

function passwordChangeOf(body: unknown): PasswordChange {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new BadRequestError('the body must be a JSON object with password (and currentPassword for your own)');
  }
  const { password, currentPassword } = body as Record<string, unknown>;
  if (typeof password !== 'string') throw new InvalidParameterError('password', 'is required (a string)');
  if (currentPassword !== undefined && typeof currentPassword !== 'string') {
    throw new InvalidParameterError('currentPassword', 'must be a string');
  }
  return { password, ...(currentPassword !== undefined ? { currentPassword } : {}) };
}
