import { z } from 'zod';
import { InvalidParameterError } from '../server/errors.js';
import type { ParameterSchemas } from './operation.js';

/**
 * Query strings read through an operation's parameter schemas. The wire form is the one the document states
 * (OpenAPI `style: form`, `explode: false`): integers in decimal digits, booleans as `true`/`false` (and the other
 * spellings Go's `strconv.ParseBool` reads, as KubeSphere's clients may send them), arrays comma-separated. The schema then checks the value (range, allowed values, custom checks) and applies defaults.
 *
 * Read as KubeSphere reads queries: an empty value is the same as an absent parameter, unknown parameters are
 * ignored, and a repeated parameter is accepted only when every copy is the same. A bad value is an
 * `InvalidParameterError` (a 400 Status) naming the parameter; it never falls back to a default.
 */
export function parseQuery<S extends ParameterSchemas>(
  schemas: S,
  query: Readonly<Record<string, unknown>>,
): z.output<S> {
  const result: Record<string, unknown> = {};
  for (const [name, wire] of wireForms(schemas)) {
    const text = singleValue(query, name);
    const decoded = text === undefined ? undefined : decode(wire, text);
    const parsed = decoded === INVALID ? undefined : wire.schema.safeParse(decoded);
    if (!parsed?.success) {
      throw new InvalidParameterError(name, text === undefined ? 'is required' : problem(wire, text, parsed?.error));
    }
    if (parsed.data !== undefined) result[name] = parsed.data;
  }
  return result as z.output<S>;
}

/** What the document says of one parameter, as far as reading its text needs. */
interface WireForm {
  readonly schema: z.ZodType;
  readonly type: 'integer' | 'number' | 'boolean' | 'array' | 'string';
  readonly enum?: readonly unknown[];
  readonly minimum?: number;
  readonly maximum?: number;
}

const INVALID = Symbol('invalid');

/** The spellings Go's `strconv.ParseBool` accepts: KubeSphere reads its boolean parameters with it. */
export const GO_BOOLEAN_VALUES: Readonly<Record<string, boolean>> = Object.freeze({
  1: true,
  t: true,
  T: true,
  TRUE: true,
  true: true,
  True: true,
  0: false,
  f: false,
  F: false,
  FALSE: false,
  false: false,
  False: false,
});
const SAFE_LIMIT = Number.MAX_SAFE_INTEGER;
const wireFormsOf = new WeakMap<ParameterSchemas, ReadonlyMap<string, WireForm>>();

/** Each parameter's wire form, derived once per schema from the same JSON Schema the document shows. */
function wireForms(schemas: ParameterSchemas): ReadonlyMap<string, WireForm> {
  let forms = wireFormsOf.get(schemas);
  if (!forms) {
    forms = new Map(
      Object.entries(schemas.shape).map(([name, schema]) => [name, wireForm(name, schema as z.ZodType)] as const),
    );
    wireFormsOf.set(schemas, forms);
  }
  return forms;
}

function wireForm(name: string, schema: z.ZodType): WireForm {
  const json = z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input' }) as {
    type?: string;
    enum?: unknown[];
    minimum?: number;
    maximum?: number;
  };
  const type = json.type;
  if (type !== 'integer' && type !== 'number' && type !== 'boolean' && type !== 'array' && type !== 'string') {
    throw new Error(`query parameter "${name}" has a schema of type ${String(type)}, which has no form encoding`);
  }
  return {
    schema,
    type,
    ...(json.enum && { enum: json.enum }),
    ...(json.minimum !== undefined && json.minimum > -SAFE_LIMIT && { minimum: json.minimum }),
    ...(json.maximum !== undefined && json.maximum < SAFE_LIMIT && { maximum: json.maximum }),
  };
}

function decode(wire: WireForm, text: string): unknown {
  switch (wire.type) {
    case 'integer':
      return /^-?\d+$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : INVALID;
    case 'number':
      return /^-?\d+(?:\.\d+)?$/.test(text) ? Number(text) : INVALID;
    case 'boolean':
      return Object.hasOwn(GO_BOOLEAN_VALUES, text) ? GO_BOOLEAN_VALUES[text] : INVALID;
    case 'array':
      return text.split(',').filter((item) => item !== '');
    case 'string':
      return text;
  }
}

/** The message of a bad value: a check's own words, or what the parameter's type and range require. */
function problem(wire: WireForm, text: string, error: z.ZodError | undefined): string {
  const custom = error?.issues.find((issue) => issue.code === 'custom');
  if (custom) return custom.message;
  if (wire.enum) return `"${text}" is not one of ${wire.enum.join(', ')}`;
  switch (wire.type) {
    case 'integer':
    case 'number': {
      const kind = wire.type === 'integer' ? 'an integer' : 'a number';
      if (wire.minimum !== undefined && wire.maximum !== undefined)
        return `"${text}" is not ${kind} from ${wire.minimum} to ${wire.maximum}`;
      if (wire.minimum !== undefined) return `"${text}" is not ${kind} of at least ${wire.minimum}`;
      if (wire.maximum !== undefined) return `"${text}" is not ${kind} of at most ${wire.maximum}`;
      return `"${text}" is not ${kind}`;
    }
    case 'boolean':
      return `"${text}" is not a boolean (true or false)`;
    default:
      return error?.issues[0]?.message ?? `"${text}" is not a valid value`;
  }
}

/**
 * One text value, or `undefined` when absent or empty. Express gives an array for a repeated parameter (accepted
 * when every copy is the same) and an object for `p[x]=` forms (never valid here).
 */
function singleValue(query: Readonly<Record<string, unknown>>, parameter: string): string | undefined {
  if (!Object.hasOwn(query, parameter)) return undefined;
  const raw = query[parameter];
  if (raw === undefined) return undefined;
  if (typeof raw === 'string') return raw === '' ? undefined : raw;
  if (Array.isArray(raw) && raw.length > 0 && raw.every((v) => typeof v === 'string')) {
    if (raw.some((v) => v !== raw[0]))
      throw new InvalidParameterError(parameter, 'given more than once with different values');
    return raw[0] === '' ? undefined : (raw[0] as string);
  }
  throw new InvalidParameterError(parameter, 'must be a single text value');
}
