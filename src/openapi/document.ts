import { z } from 'zod';
import type { OperationDefinition, ParameterSchemas, ResponseDefinition } from './operation.js';
import { apiComponents } from './schemas.js';

/**
 * Builds an OpenAPI 3.0 document from operation definitions: zod 4's own `z.toJSONSchema` (target `openapi-3.0`)
 * turns each schema into a Schema Object; this file only arranges paths, parameters and responses around them.
 * Parameters and request bodies are shown as clients send them (the schema's input side), response bodies as kapi
 * writes them (the output side). Pure and deterministic: the same definitions give the same bytes.
 */
export const OPENAPI_VERSION = '3.0.3';
export const BEARER_SCHEME = 'BearerToken';
export const CLIENT_BASIC_SCHEME = 'OAuthClientBasic';

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
}

type JsonObject = Record<string, unknown>;
const COMPONENT_REF = '#/components/schemas/';

export function buildOpenApiDocument(info: DocumentInfo, operations: readonly OperationDefinition[]): JsonObject {
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const operation of operations) {
    const item = (paths[operation.path] ??= {});
    if (item[operation.method]) throw new Error(`two operations for ${operation.method} ${operation.path}`);
    item[operation.method] = operationObject(operation);
    for (const tag of operation.tags) tags.add(tag);
  }
  const schemas = componentSchemas(paths);
  return {
    openapi: OPENAPI_VERSION,
    info,
    tags: [...tags].map((name) => ({ name })),
    paths,
    components: {
      schemas,
      securitySchemes: {
        [BEARER_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'The access_token from POST /oauth/token.',
        },
        [CLIENT_BASIC_SCHEME]: {
          type: 'http',
          scheme: 'basic',
          description:
            'OAuth client id and secret (RFC 6749 §2.3.1), instead of client_id and client_secret in the form.',
        },
      },
    },
  };
}

function operationObject(operation: OperationDefinition): JsonObject {
  const parameters = [
    ...parametersOf(operation.pathParameters, 'path'),
    ...parametersOf(operation.query, 'query'),
    ...parametersOf(operation.headers, 'header'),
  ];
  return {
    operationId: operation.operationId,
    tags: [...operation.tags],
    summary: operation.summary,
    ...(operation.description && { description: operation.description }),
    security: securityOf(operation.security),
    ...(parameters.length > 0 && { parameters }),
    ...(operation.form && {
      requestBody: {
        required: true,
        content: { 'application/x-www-form-urlencoded': { schema: schemaObject(operation.form, 'input') } },
      },
    }),
    ...(operation.jsonBody && {
      requestBody: {
        required: true,
        content: { 'application/json': { schema: schemaObject(operation.jsonBody, 'input') } },
      },
    }),
    responses: Object.fromEntries(
      Object.entries(operation.responses).map(([code, response]) => [code, responseObject(response)]),
    ),
  };
}

function securityOf(security: OperationDefinition['security']): JsonObject[] {
  switch (security) {
    case 'bearer':
      return [{ [BEARER_SCHEME]: [] }];
    // the client may authenticate in the form instead: Basic is one of two ways, hence the empty alternative
    case 'client':
      return [{}, { [CLIENT_BASIC_SCHEME]: [] }];
    case 'public':
      return [];
  }
}

function parametersOf(schemas: ParameterSchemas | undefined, location: 'path' | 'query' | 'header'): JsonObject[] {
  if (!schemas) return [];
  const object = toJsonSchema(schemas, 'input') as { properties?: Record<string, JsonObject>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, property]) => {
    const { description, ...schema } = property;
    return {
      name,
      in: location,
      ...(description !== undefined && { description }),
      required: location === 'path' || (object.required ?? []).includes(name),
      // arrays travel comma-separated (what parseQuery reads)
      ...(schema['type'] === 'array' && { style: 'form', explode: false }),
      schema,
    };
  });
}

function responseObject(response: ResponseDefinition): JsonObject {
  return {
    description: response.description,
    ...(response.headers && {
      headers: Object.fromEntries(
        Object.entries(response.headers).map(([name, header]) => [
          name,
          {
            description: header.description,
            ...(header.required && { required: true }),
            schema: toJsonSchema(header.schema, 'output'),
          },
        ]),
      ),
    }),
    ...(response.body && {
      content: { [response.contentType ?? 'application/json']: { schema: schemaObject(response.body, 'output') } },
    }),
  };
}

/** A reference to the schema's component when it has one, otherwise the schema inline. */
function schemaObject(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const id = apiComponents.get(schema)?.id;
  return id ? { $ref: `${COMPONENT_REF}${id}` } : toJsonSchema(schema, io);
}

function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const json = z.toJSONSchema(schema, { target: 'openapi-3.0', io });
  if ('$defs' in json) throw new Error('an inline schema refers to a schema that is not a component');
  return withoutIds(json) as JsonObject;
}

/** The components the paths refer to, and the ones those refer to, by name. */
function componentSchemas(paths: unknown): Record<string, unknown> {
  const all = z.toJSONSchema(apiComponents, { target: 'openapi-3.0', io: 'output', uri: componentUri }).schemas;
  const wanted = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === '$ref' && typeof inner === 'string' && inner.startsWith(COMPONENT_REF)) {
          const id = inner.slice(COMPONENT_REF.length);
          if (!wanted.has(id)) {
            wanted.add(id);
            visit(all[id]);
          }
        } else visit(inner);
      }
    }
  };
  visit(paths);
  return Object.fromEntries([...wanted].sort().map((id) => [id, withoutIds(all[id])]));
}

function componentUri(id: string): string {
  return `${COMPONENT_REF}${id}`;
}

/** JSON Schema's `$id` (and `$schema`) are not part of an OpenAPI 3.0 Schema Object. */
function withoutIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIds);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== '$id' && key !== '$schema')
      .map(([key, inner]) => [key, withoutIds(inner)]),
  );
}
