import type { RequestHandler, Router } from 'express';
import type { z } from 'zod';

/**
 * One HTTP operation of kapi's own API, described once: the route mounts it by this definition, its parameters are
 * parsed with these schemas, and the platform document (`api/platform.openapi.json`) is generated from it.
 */
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Query, path or header parameters: one property per parameter. */
export type ParameterSchemas = z.ZodObject;

export interface ResponseDefinition {
  readonly description: string;
  /** The body's schema, a named component (see `apiComponent`); absent for an empty body. */
  readonly body?: z.ZodType;
  /** Defaults to application/json when there is a body. */
  readonly contentType?: string;
  /** Response headers; `required` when every answer of this status carries it. */
  readonly headers?: Readonly<
    Record<string, { readonly description: string; readonly schema: z.ZodType; readonly required?: boolean }>
  >;
}

export interface OperationDefinition {
  readonly operationId: string;
  readonly method: HttpMethod;
  /** The full path as an OpenAPI template: `/kapis/resources.kapi.io/v1alpha3/nodes/{name}`. */
  readonly path: string;
  readonly tags: readonly string[];
  readonly summary: string;
  readonly description?: string;
  /**
   * `bearer`: an access token in `Authorization: Bearer …`; `client`: an OAuth client, in the form or by HTTP Basic
   * (RFC 6749 §2.3.1); `public`: nothing.
   */
  readonly security: 'bearer' | 'client' | 'public';
  readonly pathParameters?: ParameterSchemas;
  readonly query?: ParameterSchemas;
  readonly headers?: ParameterSchemas;
  /** An `application/x-www-form-urlencoded` body: one property per form field. */
  readonly form?: z.ZodObject;
  /** An `application/json` body (kapi's own APIs under /kapis). */
  readonly jsonBody?: z.ZodType;
  /** By HTTP status code. */
  readonly responses: Readonly<Record<number, ResponseDefinition>>;
}

/** Keeps the literal types of a definition (its query schema's output type reaches the handler). */
export function defineOperation<const D extends OperationDefinition>(definition: D): D {
  return definition;
}

/**
 * Mounts `handlers` for the operation on a router that is itself mounted at `base`. The Express path comes from the
 * definition, so a route the document does not describe cannot be mounted this way.
 */
export function mountOperation(
  router: Router,
  base: string,
  operation: OperationDefinition,
  ...handlers: RequestHandler[]
): void {
  router[operation.method](expressPath(operation.path, base), ...handlers);
}

/** `/kapis/g/v/nodes/{name}` under base `/kapis/g/v` → `/nodes/:name`. */
export function expressPath(template: string, base = ''): string {
  if (!template.startsWith(`${base}/`)) throw new Error(`operation path ${template} is not under ${base}`);
  return template.slice(base.length).replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}
