import { randomInt } from 'node:crypto';
import type { KubeObject, NameRule, ResourceType } from './resource-types.js';
import type { FieldError } from './status.js';

/**
 * Object-metadata validation with kube's rules and messages (k8s.io/apimachinery/pkg/util/validation), so a bad
 * name is a 422 `Invalid` that reads exactly like the real one.
 */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MESSAGE =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

const RULES: Record<Exclude<NameRule, 'pathSegment'>, { pattern: RegExp; max: number; message: string }> = {
  subdomain: { pattern: SUBDOMAIN, max: 253, message: SUBDOMAIN_MESSAGE },
  label: { pattern: LABEL, max: 63, message: LABEL_MESSAGE },
  dns1035: { pattern: DNS1035, max: 63, message: DNS1035_MESSAGE },
};

/** kube's path.IsValidPathSegmentName: what RBAC names must be. */
export function pathSegmentProblems(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
}

/** Problems with a name under a rule; `prefix` checks a generateName, which may end in '-'. */
export function nameProblems(name: string, rule: NameRule, prefix = false): string[] {
  if (rule === 'pathSegment') return pathSegmentProblems(name);
  const { pattern, max, message } = RULES[rule];
  const checked = prefix ? name.replace(/-+$/, '') || 'a' : name;
  const problems: string[] = [];
  if (checked.length > max) problems.push(`must be no more than ${max} characters`);
  if (!pattern.test(checked)) problems.push(message);
  return problems;
}

export function isValidName(name: string, rule: NameRule): boolean {
  return nameProblems(name, rule).length === 0;
}

function qualifiedNameProblems(key: string): string[] {
  const parts = key.split('/');
  const problems: string[] = [];
  let name = key;
  if (parts.length === 2) {
    const [prefix, rest] = parts as [string, string];
    name = rest;
    if (prefix.length === 0) problems.push('prefix part must be non-empty');
    else if (prefix.length > 253 || !SUBDOMAIN.test(prefix)) problems.push(`prefix part ${SUBDOMAIN_MESSAGE}`);
  } else if (parts.length > 2) {
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) problems.push('name part must be non-empty');
  else if (name.length > 63) problems.push('name part must be no more than 63 characters');
  else if (!QUALIFIED_NAME.test(name)) {
    problems.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    );
  }
  return problems;
}

function labelValueProblems(value: unknown): string[] {
  if (typeof value !== 'string') return ['must be a string'];
  if (value.length > 63) return ['must be no more than 63 characters'];
  if (value.length > 0 && !QUALIFIED_NAME.test(value)) {
    return [
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ];
  }
  return [];
}

/** metadata checks every kind shares: name, namespace presence, labels and annotation keys. */
export function validateObjectMeta(type: ResourceType, obj: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const meta = obj.metadata;
  const name = meta.name ?? '';
  if (!name) {
    errors.push({ type: 'Required', field: 'metadata.name', detail: 'name or generateName is required' });
  } else {
    for (const problem of nameProblems(name, type.nameRule)) {
      errors.push({ type: 'Invalid', field: 'metadata.name', value: name, detail: problem });
    }
  }
  if (type.namespaced && !meta.namespace) {
    errors.push({ type: 'Required', field: 'metadata.namespace' });
  } else if (!type.namespaced && meta.namespace) {
    errors.push({ type: 'Forbidden', field: 'metadata.namespace', detail: 'not allowed on this type' });
  }
  if (meta.labels !== undefined) {
    if (!isStringRecord(meta.labels)) {
      errors.push({
        type: 'Invalid',
        field: 'metadata.labels',
        value: meta.labels,
        detail: 'must be a map of strings',
      });
    } else {
      for (const [key, value] of Object.entries(meta.labels)) {
        for (const problem of qualifiedNameProblems(key)) {
          errors.push({ type: 'Invalid', field: 'metadata.labels', value: key, detail: problem });
        }
        for (const problem of labelValueProblems(value)) {
          errors.push({ type: 'Invalid', field: `metadata.labels`, value, detail: problem });
        }
      }
    }
  }
  if (meta.annotations !== undefined) {
    if (!isStringRecord(meta.annotations)) {
      errors.push({
        type: 'Invalid',
        field: 'metadata.annotations',
        value: meta.annotations,
        detail: 'must be a map of strings',
      });
    } else {
      for (const key of Object.keys(meta.annotations)) {
        for (const problem of qualifiedNameProblems(key.toLowerCase())) {
          errors.push({ type: 'Invalid', field: 'metadata.annotations', value: key, detail: problem });
        }
      }
    }
  }
  if (
    meta.finalizers !== undefined &&
    (!Array.isArray(meta.finalizers) || meta.finalizers.some((f) => typeof f !== 'string'))
  ) {
    errors.push({
      type: 'Invalid',
      field: 'metadata.finalizers',
      value: meta.finalizers,
      detail: 'must be a list of strings',
    });
  }
  return errors;
}

function isStringRecord(value: unknown): value is Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  return Object.values(value).every((v) => typeof v === 'string');
}

/** kube's name generator: the prefix (cut to 58 characters) plus five characters from a vowel-free alphabet. */
const GENERATED_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function generateName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += GENERATED_ALPHABET[randomInt(GENERATED_ALPHABET.length)];
  return `${prefix.slice(0, 58)}${suffix}`;
}
