/**
 * What an image's manifest says (pure): where its config blob is, or, for a multi-platform index, which child
 * manifest is the platform's. Docker's v2 schema 2 and OCI manifests and indexes are read; Docker's schema 1 (signed,
 * long deprecated, with no config blob) is not, as KubeSphere's lookup does not read it.
 */
export const MANIFEST_TYPES = {
  dockerV2: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  dockerV1: 'application/vnd.docker.distribution.manifest.v1+json',
  dockerV1Signed: 'application/vnd.docker.distribution.manifest.v1+prettyjws',
} as const;

/** The Accept header of a manifest request: every type, the ones read first. */
export const MANIFEST_ACCEPT = [
  MANIFEST_TYPES.dockerV2,
  MANIFEST_TYPES.ociManifest,
  MANIFEST_TYPES.dockerList,
  MANIFEST_TYPES.ociIndex,
  MANIFEST_TYPES.dockerV1,
  MANIFEST_TYPES.dockerV1Signed,
].join(', ');

export interface Platform {
  os: string;
  architecture: string;
}

/** The platform whose image is looked up in an index: the nodes' usual one, as KubeSphere picks it. */
export const DEFAULT_PLATFORM: Platform = { os: 'linux', architecture: 'amd64' };

export type ManifestStep =
  { config: { digest: string; size?: number } } | { child: { digest: string; mediaType: string } } | { error: string };

const DIGEST = /^sha256:[a-f0-9]{64}$/;

/** Reads a manifest: its config blob, or the index's child for `platform`, or why neither. */
export function manifestStep(mediaType: string | undefined, text: string, platform = DEFAULT_PLATFORM): ManifestStep {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { error: 'the registry answered a manifest that is not JSON' };
  }
  if (typeof body !== 'object' || body === null) return { error: 'the registry answered an empty manifest' };
  const type = (mediaType?.split(';')[0]?.trim() ||
    (typeof body.mediaType === 'string' ? body.mediaType : '')) as string;
  if (body.schemaVersion === 1 || type === MANIFEST_TYPES.dockerV1 || type === MANIFEST_TYPES.dockerV1Signed)
    return { error: 'the image has a Docker schema 1 manifest, which is not read (no config blob)' };
  if (Array.isArray(body.manifests)) {
    const children = body.manifests as { digest?: unknown; mediaType?: unknown; platform?: Partial<Platform> }[];
    const child = children.find(
      (m) =>
        m.platform
          ? m.platform.os === platform.os && m.platform.architecture === platform.architecture
          : true /* a child without a platform serves every one */,
    );
    if (!child) return { error: `the image has no ${platform.os}/${platform.architecture} variant` };
    if (typeof child.digest !== 'string' || !DIGEST.test(child.digest))
      return { error: 'the image index names a child without a sha256 digest' };
    return {
      child: {
        digest: child.digest,
        mediaType: typeof child.mediaType === 'string' ? child.mediaType : MANIFEST_TYPES.ociManifest,
      },
    };
  }
  const config = body.config as { digest?: unknown; size?: unknown } | undefined;
  if (typeof config?.digest !== 'string' || !DIGEST.test(config.digest))
    return { error: 'the manifest names no config blob with a sha256 digest' };
  return { config: { digest: config.digest, ...(typeof config.size === 'number' && { size: config.size }) } };
}

/** The fields of an image's config (go-containerregistry's `ConfigFile`, as KubeSphere answers it); others dropped. */
const CONFIG_FIELDS = [
  'architecture',
  'author',
  'container',
  'created',
  'docker_version',
  'history',
  'os',
  'os.version',
  'variant',
  'os.features',
  'rootfs',
  'config',
] as const;

export function imageConfigAnswer(text: string): Record<string, unknown> | { error: string } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { error: 'the image config blob is not JSON' };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { error: 'the image config blob is not an object' };
  const answer: Record<string, unknown> = {};
  for (const field of CONFIG_FIELDS) {
    if (field in body) answer[field] = (body as Record<string, unknown>)[field];
  }
  return answer;
}
