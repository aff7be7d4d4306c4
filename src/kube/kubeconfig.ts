import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';

/** One cluster, user or context body as written in a kubeconfig (relative file paths already made absolute). */
export type KubeconfigFields = Readonly<Record<string, unknown>>;

/**
 * One or more kubeconfig files merged the way kubectl merges KUBECONFIG: the first file to define a cluster, user or
 * context name, or to set current-context, wins. Entries stay as written until a context is selected, so a field
 * kapi does not use in an unrelated entry never stops it from starting.
 */
export interface Kubeconfig {
  readonly currentContext: string | undefined;
  readonly clusters: ReadonlyMap<string, KubeconfigFields>;
  readonly users: ReadonlyMap<string, KubeconfigFields>;
  readonly contexts: ReadonlyMap<string, KubeconfigFields>;
}

/** A kubeconfig that cannot be used; the message never quotes the file, which may hold tokens and keys. */
export class KubeconfigError extends Error {
  override name = 'KubeconfigError';
}

/** Reads and merges the files in order; each error names the file it comes from. */
export function readKubeconfigs(
  files: readonly string[],
  read: (file: string) => string = (file) => readFileSync(file, 'utf8'),
): Kubeconfig {
  if (files.length === 0) {
    throw new KubeconfigError('kubeconfig: no file given and no home directory to find ~/.kube/config in');
  }
  const merged = {
    currentContext: undefined as string | undefined,
    clusters: new Map<string, KubeconfigFields>(),
    users: new Map<string, KubeconfigFields>(),
    contexts: new Map<string, KubeconfigFields>(),
  };
  for (const file of files) {
    let config: Kubeconfig;
    try {
      config = parseKubeconfig(read(file), path.dirname(path.resolve(file)));
    } catch (error) {
      // no `cause`: an error from deeper down may quote the file, which may hold credentials
      throw new KubeconfigError(`kubeconfig ${file} could not be read: ${safeReason(error)}`);
    }
    merged.currentContext ||= config.currentContext;
    for (const kind of ['clusters', 'users', 'contexts'] as const) {
      for (const [name, fields] of config[kind]) if (!merged[kind].has(name)) merged[kind].set(name, fields);
    }
  }
  return merged;
}

/** One kubeconfig document; relative paths in it are resolved against `dir`, the file's directory (as kubectl). */
export function parseKubeconfig(text: string, dir: string): Kubeconfig {
  const doc = parseDocument(text);
  const [error] = doc.errors;
  if (error) {
    // the parser's message quotes the offending text: only the position is kept
    const line = error.linePos?.[0].line;
    throw new KubeconfigError(`not valid YAML${line ? ` (line ${line})` : ''}`);
  }
  let top: unknown;
  try {
    top = doc.toJS({ maxAliasCount: 100 });
  } catch {
    throw new KubeconfigError('not valid YAML');
  }
  if (top === null || top === undefined) top = {};
  if (!isMapping(top)) throw new KubeconfigError('not a kubeconfig (the document is not a mapping)');
  const currentContext = top['current-context'];
  if (currentContext !== undefined && currentContext !== null && typeof currentContext !== 'string') {
    throw new KubeconfigError('current-context is not a string');
  }
  return {
    currentContext: currentContext || undefined,
    clusters: entries(top, 'clusters', 'cluster', (fields) => resolvePaths(fields, ['certificate-authority'], dir)),
    users: entries(top, 'users', 'user', (fields) => resolveUserPaths(fields, dir)),
    contexts: entries(top, 'contexts', 'context', (fields) => fields),
  };
}

function entries(
  top: Record<string, unknown>,
  list: 'clusters' | 'users' | 'contexts',
  body: 'cluster' | 'user' | 'context',
  resolve: (fields: KubeconfigFields) => KubeconfigFields,
): Map<string, KubeconfigFields> {
  const found = new Map<string, KubeconfigFields>();
  const items = top[list];
  if (items === undefined || items === null) return found;
  if (!Array.isArray(items)) throw new KubeconfigError(`${list} is not a list`);
  items.forEach((item: unknown, i) => {
    if (!isMapping(item)) throw new KubeconfigError(`${list}[${i}] is not a mapping`);
    if (typeof item.name !== 'string' || !item.name) throw new KubeconfigError(`${list}[${i}].name is missing`);
    const fields = item[body] ?? (body === 'user' ? {} : undefined);
    if (!isMapping(fields)) throw new KubeconfigError(`${list}[${i}].${body} is missing`);
    if (!found.has(item.name)) found.set(item.name, resolve(fields));
  });
  return found;
}

function resolveUserPaths(fields: KubeconfigFields, dir: string): KubeconfigFields {
  const user = resolvePaths(fields, ['client-certificate', 'client-key', 'tokenFile'], dir);
  const exec = user.exec;
  // like kubectl: a command with a path separator is relative to the kubeconfig, a bare name is looked up on PATH
  if (isMapping(exec) && typeof exec.command === 'string' && exec.command.includes(path.sep)) {
    return { ...user, exec: resolvePaths(exec, ['command'], dir) };
  }
  return user;
}

function resolvePaths(fields: KubeconfigFields, keys: readonly string[], dir: string): KubeconfigFields {
  const resolved: Record<string, unknown> = { ...fields };
  for (const key of keys) {
    const value = fields[key];
    if (typeof value === 'string' && value && !path.isAbsolute(value)) resolved[key] = path.join(dir, value);
  }
  return resolved;
}

/** A read error's code and path (fs messages hold no content), or one of ours; anything else is not repeated. */
function safeReason(error: unknown): string {
  if (error instanceof KubeconfigError) return error.message;
  const e = error as { code?: unknown; message?: unknown };
  if (typeof e.code === 'string' && typeof e.message === 'string') return e.message;
  return 'not a valid kubeconfig';
}

export function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
