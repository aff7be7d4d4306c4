/**
 * Holds real HTTP answers to an OpenAPI document: openapi-backend finds the operation (method and path template)
 * and validates the body and headers with the document's schemas (Ajv); this file only records which documented
 * answers were seen, so a suite can prove it exercised every operation and every documented status.
 */
import { readFileSync } from 'node:fs';
import ajvFormats from 'ajv-formats';
import { OpenAPIBackend, SetMatchType, type Document, type Operation } from 'openapi-backend';

// a CommonJS module: its default import is the function itself
const addFormats = ajvFormats as unknown as typeof ajvFormats.default;

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The raw body text ('' when empty). */
  text: string;
}

/**
 * openapi-backend validates bodies of `application/json` only: a JSON media type with a suffix
 * (`application/jwk-set+json`) gets the same schema under application/json too, marked so the media-type check
 * still sees what the document says.
 */
function withJsonAliases(definition: Document): Document {
  const copy = structuredClone(definition) as unknown as {
    paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, unknown> }> }>>;
  };
  for (const item of Object.values(copy.paths)) {
    for (const operation of Object.values(item)) {
      for (const response of Object.values(operation.responses ?? {})) {
        const content = response.content ?? {};
        const suffixed = Object.keys(content).find((type) => /^application\/[\w.-]+\+json$/.test(type));
        if (suffixed && !content['application/json']) {
          content['application/json'] = { ...structuredClone(content[suffixed] as object), 'x-alias-of': suffixed };
        }
      }
    }
  }
  return copy as unknown as Document;
}

export class ContractChecker {
  private readonly seen = new Set<string>();

  private constructor(private readonly api: OpenAPIBackend) {}

  static async load(file: string): Promise<ContractChecker> {
    const definition = JSON.parse(readFileSync(file, 'utf8')) as Document;
    const api = new OpenAPIBackend({
      definition: withJsonAliases(definition),
      strict: true,
      quick: true,
      validate: true,
      // formats (date-time, …) are checked, not ignored
      customizeAjv: (ajv) => addFormats(ajv as never) as never,
    });
    await api.init();
    return new ContractChecker(api);
  }

  /** The problems of one answer to `method url`; empty when the document describes it exactly. */
  problems(method: string, url: string, answer: Answer): string[] {
    const [path = '', search = ''] = url.split('?');
    const operation = this.api.router.matchOperation({
      method,
      path,
      query: Object.fromEntries(new URLSearchParams(search)),
      headers: {},
    }) as Operation | undefined;
    if (!operation) return [`${method} ${path}: no operation in the document`];
    const name = `${operation.operationId} ${answer.status}`;
    const documented = operation.responses?.[String(answer.status)] as
      { content?: Record<string, unknown>; headers?: Record<string, { required?: boolean }> } | undefined;
    if (!documented) return [`${name}: status not documented`];
    this.seen.add(name);

    const problems: string[] = [];
    const content = (documented.content ?? {}) as Record<string, { 'x-alias-of'?: string }>;
    const mediaTypes = Object.keys(content).filter((type) => content[type]!['x-alias-of'] === undefined);
    const contentType = String(answer.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    if (mediaTypes.length === 0) {
      if (answer.text !== '') problems.push(`${name}: documented without a body, answered ${answer.text.length} bytes`);
    } else if (!mediaTypes.includes(contentType)) {
      problems.push(`${name}: content type ${contentType || '(none)'} is not one of ${mediaTypes.join(', ')}`);
    } else if (!/json$/.test(contentType)) {
      // a page (text/html): its media type is what the document says; its text is not JSON to validate
      if (answer.text === '') problems.push(`${name}: documented with a ${contentType} body, answered none`);
    } else {
      let body: unknown;
      try {
        body = JSON.parse(answer.text);
      } catch {
        problems.push(`${name}: the body is not JSON`);
      }
      const result = this.api.validator.validateResponse(body, operation, answer.status);
      for (const error of result.errors ?? []) problems.push(`${name}: body ${error.instancePath} ${error.message}`);
    }
    const headers = this.api.validator.validateResponseHeaders(answer.headers, operation, {
      statusCode: answer.status,
      setMatchType: SetMatchType.Any,
    });
    for (const error of headers.errors ?? []) problems.push(`${name}: header ${error.instancePath} ${error.message}`);
    for (const [header, definition] of Object.entries(documented.headers ?? {})) {
      if (definition.required && answer.headers[header.toLowerCase()] === undefined)
        problems.push(`${name}: required header ${header} is missing`);
    }
    return problems;
  }

  /** Documented `operationId status` pairs no checked answer has shown. */
  unseen(): string[] {
    const all: string[] = [];
    for (const operation of this.api.getOperations()) {
      for (const status of Object.keys(operation.responses ?? {})) all.push(`${operation.operationId} ${status}`);
    }
    return all.filter((name) => !this.seen.has(name)).sort();
  }
}
