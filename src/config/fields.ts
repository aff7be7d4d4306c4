import { DurationError, parseDuration } from './duration.js';

/**
 * Reading fields of a custom resource the way every part of the ClusterConfiguration is read: leniently typed input,
 * each problem pushed to `problems` prefixed by its field path, secret values never quoted. Pure.
 */
export type SecretLookup = (name: string) => Readonly<Record<string, string>> | undefined;

const MAX_SECRET_LENGTH = 512;

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function field(value: unknown, key: string): unknown {
  return isObject(value) ? value[key] : undefined;
}

export function isWholeNumberIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

export function optionalObject(value: unknown, path: string, problems: string[]): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (isObject(value)) return value;
  problems.push(`${path}: must be an object, not ${describe(value)}`);
  return undefined;
}

/** Seconds from a duration field; `undefined` when absent (take the default), `null` when invalid (reported). */
export function durationField(value: unknown, path: string, problems: string[]): number | undefined | null {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    problems.push(`${path}: must be a duration such as "2h" or "90m", not ${describe(value)}`);
    return null;
  }
  let seconds: number;
  try {
    seconds = parseDuration(value);
  } catch (err) {
    if (!(err instanceof DurationError)) throw err;
    problems.push(`${path}: "${value}" ${err.message}`);
    return null;
  }
  if (seconds <= 0) problems.push(`${path}: "${value}" must be longer than zero`);
  else if (!Number.isInteger(seconds)) problems.push(`${path}: "${value}" must be a whole number of seconds`);
  else return seconds;
  return null;
}

/** A whole number from `min` to `max`; `fallback` when absent. */
export function wholeNumberField(
  value: unknown,
  path: string,
  [min, max]: readonly [number, number],
  fallback: number,
  problems: string[],
): number {
  if (value === undefined) return fallback;
  if (isWholeNumberIn(value, min, max)) return value;
  problems.push(`${path}: must be a whole number from ${min} to ${max}, not ${describe(value)}`);
  return fallback;
}

export function booleanField(value: unknown, path: string, fallback: boolean, problems: string[]): boolean {
  if (value === undefined) return fallback;
  if (typeof value === 'boolean') return value;
  problems.push(`${path}: must be true or false, not ${describe(value)}`);
  return fallback;
}

/**
 * The value of a `{name, key}` reference to a Secret in the ClusterConfiguration's namespace, checked as a
 * credential (`checkedSecret`) unless `raw` (a CA bundle has newlines). Never quotes the value.
 */
export function secretRefValue(
  ref: unknown,
  path: string,
  secrets: SecretLookup,
  problems: string[],
  options: { raw?: boolean } = {},
): string | undefined {
  if (!isObject(ref)) {
    problems.push(`${path}: must be an object with name and key, not ${describe(ref)}`);
    return undefined;
  }
  const { name, key } = ref;
  if (typeof name !== 'string' || name === '') problems.push(`${path}.name: is required`);
  if (typeof key !== 'string' || key === '') problems.push(`${path}.key: is required`);
  if (typeof name !== 'string' || name === '' || typeof key !== 'string' || key === '') return undefined;
  const data = secrets(name);
  if (data === undefined) {
    problems.push(`${path}: Secret "${name}" not found in the ClusterConfiguration's namespace`);
    return undefined;
  }
  const value = data[key];
  if (value === undefined) {
    problems.push(`${path}: Secret "${name}" has no key "${key}"`);
    return undefined;
  }
  const what = `the value of key "${key}" in Secret "${name}"`;
  if (options.raw) {
    if (value.trim() === '') problems.push(`${path}: ${what} is empty`);
    else return value;
    return undefined;
  }
  return checkedSecret(value, path, what, problems);
}

/** A URL field's value parsed, or undefined with the problem reported (absent: `is required (<expected>)`). */
export function parsedUrl(value: unknown, path: string, problems: string[], expected: string): URL | undefined {
  if (typeof value !== 'string' || value === '') {
    problems.push(`${path}: is required (${expected})`);
    return undefined;
  }
  try {
    return new URL(value);
  } catch {
    problems.push(`${path}: ${describe(value)} is not a URL`);
    return undefined;
  }
}

/** The name of a `{name}` Secret reference, read leniently (for deciding which Secrets to watch). */
export function referencedName(ref: unknown): string | undefined {
  const name = field(ref, 'name');
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** Checks a secret without ever putting its value (or any part of it) into a message. */
export function checkedSecret(value: string, path: string, what: string, problems: string[]): string | undefined {
  if (value.length === 0) problems.push(`${path}: ${what} is empty`);
  else if (value.length > MAX_SECRET_LENGTH)
    problems.push(`${path}: ${what} is longer than ${MAX_SECRET_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  else if (/[\u0000-\u001f\u007f]/.test(value)) {
    problems.push(
      `${path}: ${what} contains a control character such as a newline (write it without one, e.g. echo -n)`,
    );
  } else if (value.trim() !== value) problems.push(`${path}: ${what} starts or ends with a space`);
  else return value;
  return undefined;
}

export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** A short rendering of a non-secret value for a message: strings quoted and cut, other types by name. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeName(value);
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
