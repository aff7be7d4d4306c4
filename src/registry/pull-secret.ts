import { canonicalRegistry } from './image-reference.js';

/**
 * The credentials an image pull secret holds for one registry (pure). Kubernetes' two pull secret types are read:
 * `kubernetes.io/dockerconfigjson` (`.dockerconfigjson`: `{"auths": {...}}`) and `kubernetes.io/dockercfg`
 * (`.dockercfg`: the map itself). Each entry is keyed by a registry, written as Docker writes it (`host[:port]`,
 * maybe with a scheme and a path: `https://index.docker.io/v1/`); it gives `username` and `password`, or `auth`
 * (base64 of `user:password`).
 *
 * Only the entry of the image's own registry is used, as kubelet matches them: KubeSphere offers the secret's first
 * entry to whatever registry the image names, which hands one registry's password to another.
 */
export interface RegistryCredentials {
  username: string;
  password: string;
}

export interface PullSecretCredentials {
  /** The credentials for the registry; none when the secret has no entry for it (the lookup goes anonymous). */
  credentials?: RegistryCredentials;
  /** The entry was written with `http://`: the registry is known to serve plain HTTP. */
  plainHttp: boolean;
}

export const DOCKER_CONFIG_JSON = 'kubernetes.io/dockerconfigjson';
export const DOCKER_CFG = 'kubernetes.io/dockercfg';

interface SecretLike {
  type?: unknown;
  data?: unknown;
}

/** The host an entry's key names (scheme and path dropped; Docker Hub's aliases as one). */
function registryOfKey(key: string): { registry: string; plainHttp: boolean } | undefined {
  const trimmed = key.trim();
  const plainHttp = /^http:\/\//i.test(trimmed);
  const host = trimmed.replace(/^[a-z]+:\/\//i, '').split('/')[0];
  if (!host) return undefined;
  return { registry: canonicalRegistry(host), plainHttp };
}

function decoded(base64: string): string | undefined {
  const text = Buffer.from(base64, 'base64').toString('utf8');
  return text === '' ? undefined : text;
}

/** The registry credentials of an entry: username and password, else `auth`; undefined when it has neither. */
function credentialsOf(entry: unknown): RegistryCredentials | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const { username, password, auth } = entry as Record<string, unknown>;
  if (typeof username === 'string' && username !== '' && typeof password === 'string') return { username, password };
  if (typeof auth === 'string' && auth !== '') {
    const pair = decoded(auth);
    const colon = pair?.indexOf(':') ?? -1;
    if (pair && colon > 0) return { username: pair.slice(0, colon), password: pair.slice(colon + 1) };
  }
  return undefined;
}

/**
 * What `secret` (a Secret as kube-apiserver answers it) gives for `registry`, or why it is no pull secret. The
 * error never quotes the secret's content.
 */
export function pullSecretCredentials(
  secret: SecretLike,
  name: string,
  registry: string,
): PullSecretCredentials | { error: string } {
  const data = (typeof secret.data === 'object' && secret.data !== null ? secret.data : {}) as Record<string, unknown>;
  let key: string;
  if (secret.type === DOCKER_CONFIG_JSON) key = '.dockerconfigjson';
  else if (secret.type === DOCKER_CFG) key = '.dockercfg';
  else return { error: `secret "${name}" is of type ${String(secret.type)}, not an image pull secret` };
  const encoded = data[key];
  if (typeof encoded !== 'string') return { error: `secret "${name}" has no ${key}` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
  } catch {
    return { error: `secret "${name}": ${key} is not JSON` };
  }
  const auths = secret.type === DOCKER_CONFIG_JSON ? (parsed as { auths?: unknown } | null)?.auths : parsed;
  if (typeof auths !== 'object' || auths === null) return { error: `secret "${name}" holds no registry entries` };
  const wanted = canonicalRegistry(registry);
  for (const [entryKey, entry] of Object.entries(auths)) {
    const named = registryOfKey(entryKey);
    if (named?.registry !== wanted) continue;
    const credentials = credentialsOf(entry);
    return { ...(credentials && { credentials }), plainHttp: named.plainHttp };
  }
  return { plainHttp: false };
}
