import { mergePatch } from '../kube/merge-patch.js';
import { badRequest, StatusError } from './status.js';

export { mergePatch };

/**
 * The patch formats kube-apiserver accepts: JSON merge patch (RFC 7386), JSON patch (RFC 6902), and strategic merge
 * patch, which the sandbox applies as a merge patch after dropping its `$` directives (it has no per-field merge
 * keys, so a patched list replaces the list, as in a merge patch). Pure functions over plain JSON.
 */
export const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
] as const;

export type PatchType = (typeof PATCH_TYPES)[number];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(value: unknown): value is Record<string, Json> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Drops strategic-merge directives ($patch, $retainKeys, $setElementOrder/..., $deleteFromPrimitiveList/...). */
export function stripDirectives(patch: unknown): unknown {
  if (Array.isArray(patch)) {
    return patch.filter((item) => !(isObject(item) && item.$patch === 'delete')).map(stripDirectives);
  }
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(patch)) {
    if (!key.startsWith('$')) result[key] = stripDirectives(value);
  }
  return result;
}

/** A JSON patch that applied badly: kube answers 422 with the patch library's message as the cause. */
function patchFailed(message: string): StatusError {
  return new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {
    causes: [{ reason: 'UnexpectedServerResponse', message }],
  });
}

function parsePointer(pointer: unknown): string[] {
  if (typeof pointer !== 'string' || (pointer !== '' && !pointer.startsWith('/'))) {
    throw badRequest(`invalid JSON pointer: ${JSON.stringify(pointer)}`);
  }
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(token: string, length: number, forInsert: boolean): number {
  if (forInsert && token === '-') return length;
  if (!/^(0|[1-9]\d*)$/.test(token)) throw patchFailed(`invalid array index "${token}"`);
  const index = Number(token);
  if (index > length || (!forInsert && index === length)) throw patchFailed(`array index ${index} out of bounds`);
  return index;
}

function getAt(doc: unknown, path: string[]): unknown {
  let current = doc;
  for (const token of path) {
    if (Array.isArray(current)) current = current[arrayIndex(token, current.length, false)];
    else if (isObject(current) && Object.hasOwn(current, token)) current = current[token];
    else throw patchFailed(`path "/${path.join('/')}" does not exist`);
  }
  return current;
}

function parentOf(doc: unknown, path: string[]): { parent: unknown; last: string } {
  if (path.length === 0) throw patchFailed('the root cannot be the target of this operation');
  return { parent: getAt(doc, path.slice(0, -1)), last: path[path.length - 1] as string };
}

function addAt(doc: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const { parent, last } = parentOf(doc, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, true), 0, value);
  else if (isObject(parent)) (parent as Record<string, unknown>)[last] = value;
  else throw patchFailed(`cannot add to a non-container at "/${path.join('/')}"`);
  return doc;
}

function removeAt(doc: unknown, path: string[]): unknown {
  const { parent, last } = parentOf(doc, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, false), 1);
  else if (isObject(parent) && Object.hasOwn(parent, last)) delete parent[last];
  else throw patchFailed(`path "/${path.join('/')}" does not exist`);
  return doc;
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, canonical(value[k])]),
  );
}

export function jsonPatch(target: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations))
    throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let doc = structuredClone(target);
  for (const operation of operations) {
    if (!isObject(operation)) throw badRequest('invalid JSON patch operation: not an object');
    const path = parsePointer(operation.path);
    switch (operation.op) {
      case 'add':
        doc = addAt(doc, path, structuredClone(operation.value));
        break;
      case 'remove':
        doc = removeAt(doc, path);
        break;
      case 'replace':
        getAt(doc, path);
        doc =
          path.length === 0
            ? structuredClone(operation.value)
            : addAt(removeAt(doc, path), path, structuredClone(operation.value));
        break;
      case 'move': {
        const from = parsePointer(operation.from);
        const value = getAt(doc, from);
        doc = addAt(removeAt(doc, from), path, value);
        break;
      }
      case 'copy':
        doc = addAt(doc, path, structuredClone(getAt(doc, parsePointer(operation.from))));
        break;
      case 'test':
        if (!deepEqual(getAt(doc, path), operation.value)) {
          throw patchFailed(`testing value /${path.join('/')} failed: test failed`);
        }
        break;
      default:
        throw badRequest(`Unexpected kind: ${String(operation.op)}`);
    }
  }
  return doc;
}

/** Applies a parsed patch document of the given type to a copy of `target`. */
export function applyPatch(type: PatchType, target: unknown, patch: unknown): unknown {
  switch (type) {
    case 'application/json-patch+json':
      return jsonPatch(target, patch);
    case 'application/merge-patch+json':
      if (!isObject(patch)) throw badRequest('the patch must be a JSON object');
      return mergePatch(structuredClone(target), patch);
    case 'application/strategic-merge-patch+json':
      if (!isObject(patch)) throw badRequest('the patch must be a JSON object');
      return mergePatch(structuredClone(target), stripDirectives(patch));
  }
}
