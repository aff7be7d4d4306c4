/**
 * An image reference as container runtimes read it (pure; Docker's reference grammar, which kubelet's runtimes and
 * go-containerregistry, KubeSphere's image lookup, follow): `[registry/]repository[:tag][@digest]`. The first segment
 * is a registry only when it has a `.` or a `:` or is `localhost`; Docker Hub is the default, spelled
 * `index.docker.io`, where a one-segment repository is `library/<name>`.
 */
export interface ImageReference {
  /** The registry's host, with its port if named. */
  registry: string;
  repository: string;
  /** The tag, `latest` when neither a tag nor a digest is named. */
  tag?: string;
  /** `sha256:<hex>`, when named (then it decides, not the tag). */
  digest?: string;
}

export const DOCKER_HUB = 'index.docker.io';
const DOCKER_HUB_ALIASES = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);

const REPOSITORY_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;
const REGISTRY =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/** The registry's canonical name: Docker Hub's aliases are one. */
export function canonicalRegistry(host: string): string {
  const lower = host.toLowerCase();
  return DOCKER_HUB_ALIASES.has(lower) ? DOCKER_HUB : lower;
}

/** Parses `image`, or says why it is not an image reference. */
export function parseImageReference(image: string): ImageReference | { error: string } {
  const text = image.trim();
  if (text === '') return { error: 'no image named' };
  if (text.length > 1024) return { error: 'the image reference is longer than 1024 characters' };
  let rest = text;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) return { error: `"${digest}" is not a sha256 digest` };
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  // a colon after the last slash starts a tag; before it, it is a registry's port
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) return { error: `"${tag}" is not a valid tag` };
  }
  const slash = rest.indexOf('/');
  const first = slash >= 0 ? rest.slice(0, slash) : '';
  let registry = DOCKER_HUB;
  let repository = rest;
  if (slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost')) {
    if (!REGISTRY.test(first)) return { error: `"${first}" is not a registry host` };
    registry = canonicalRegistry(first);
    repository = rest.slice(slash + 1);
  }
  if (repository.length < 2 || repository.length > 255) return { error: 'a repository name has 2 to 255 characters' };
  if (!repository.split('/').every((part) => REPOSITORY_COMPONENT.test(part)))
    return { error: `"${repository}" is not a repository name (lower-case letters, digits, and . _ - between them)` };
  if (registry === DOCKER_HUB && !repository.includes('/')) repository = `library/${repository}`;
  return { registry, repository, ...(digest ? { digest } : { tag: tag ?? 'latest' }) };
}

/** What the manifest is asked for by: the digest when named, else the tag. */
export const referenceOf = (image: ImageReference) => image.digest ?? image.tag ?? 'latest';

/**
 * Whether a registry may be spoken to over plain HTTP when HTTPS fails to connect (go-containerregistry's rule):
 * loopback, `localhost`, `*.local`, `*.localhost` and private (RFC 1918) addresses, where registries often serve
 * without TLS.
 */
export function mayUsePlainHttp(registry: string): boolean {
  const host = registry
    .replace(/:[0-9]+$/, '')
    .replace(/^\[|\]$/g, '')
    .toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host === '::1') return true;
  const octets = host.split('.').map(Number);
  if (octets.length !== 4 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) return false;
  const [a, b] = octets as [number, number, number, number];
  return a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
}
