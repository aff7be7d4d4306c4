import { createHash } from 'node:crypto';
import { Agent, request, type Dispatcher } from 'undici';
import { parseChallenge } from './challenge.js';
import { mayUsePlainHttp, referenceOf, type ImageReference } from './image-reference.js';
import { MANIFEST_ACCEPT, imageConfigAnswer, manifestStep } from './manifests.js';
import type { RegistryCredentials } from './pull-secret.js';

/**
 * A client of container registries (the Docker Registry HTTP API v2, which every registry serves: Docker Hub, Harbor,
 * Quay, GHCR, the CNCF distribution registry), for the console's image lookup: an image's config (its exposed ports,
 * environment, command) and a repository's tags. Read only, and bounded: one deadline for a whole lookup, a size
 * limit on every answer, a few redirects, a few pages of tags.
 *
 * Authentication is the registry's own: its `/v2/` answer says Basic or Bearer; for Bearer a token for
 * `repository:<repo>:pull` is asked of the realm it names, with the pull secret's credentials. Nothing the registry
 * answers goes back to the caller but the config's fields, the tags, and the registry's error codes and messages.
 */
export interface RegistryAccess {
  credentials?: RegistryCredentials;
  /** The pull secret names the registry with `http://`. */
  plainHttp?: boolean;
  /** Skip verifying the registry's TLS certificate (the pull secret's `secret.kapi.io/force-insecure`). */
  insecure?: boolean;
}

export type LookupFailureReason = 'not-found' | 'unauthorized' | 'unreachable' | 'timeout' | 'invalid';

export interface LookupFailure {
  failure: LookupFailureReason;
  message: string;
}

export interface RegistryClientOptions {
  /** For a whole lookup: ping, token, manifests, blob. */
  timeoutMs?: number;
  maxManifestBytes?: number;
  maxConfigBytes?: number;
  /** Pages of tags read at most. */
  maxTagPages?: number;
  /** Tags asked per page. */
  tagPageSize?: number;
}

const DEFAULTS = {
  timeoutMs: 15_000,
  maxManifestBytes: 4 << 20,
  maxConfigBytes: 8 << 20,
  maxTagPages: 10,
  tagPageSize: 1000,
} as const;
const MAX_TOKEN_BYTES = 1 << 20;
const MAX_ERROR_BYTES = 64 << 10;
const MAX_REDIRECTS = 3;

class Failure extends Error {
  constructor(
    readonly failure: LookupFailureReason,
    message: string,
  ) {
    super(message);
  }
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

const header = (headers: Answer['headers'], name: string) => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** The registry's own error codes and messages (`{"errors":[{"code","message"}]}`), short; else the status. */
function registryErrors(answer: Answer): { text: string; codes: string[] } {
  try {
    const errors = (JSON.parse(answer.body.toString('utf8')) as { errors?: { code?: unknown; message?: unknown }[] })
      .errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const codes = errors.map((e) => String(e.code ?? ''));
      const text = errors
        .slice(0, 3)
        .map((e) => `${String(e.code ?? 'ERROR')}: ${String(e.message ?? '').slice(0, 200)}`)
        .join('; ');
      return { text, codes };
    }
  } catch {
    // not JSON: the status says it
  }
  return { text: `HTTP ${answer.status}`, codes: [] };
}

const sha256 = (body: Buffer) => `sha256:${createHash('sha256').update(body).digest('hex')}`;

/** One lookup's conversation with one registry: its base URL and authorization, found once, used for every call. */
class RegistrySession {
  private base = '';
  private authorization: string | undefined;

  constructor(
    private readonly client: RegistryClient,
    private readonly registry: string,
    private readonly repository: string,
    private readonly access: RegistryAccess,
    private readonly signal: AbortSignal,
  ) {}

  /** Finds the scheme (HTTPS; plain HTTP only where it may be, once HTTPS cannot connect) and authenticates. */
  async open(): Promise<void> {
    let ping: Answer;
    try {
      this.base = `https://${this.registry}`;
      ping = await this.get(`${this.base}/v2/`, {}, MAX_ERROR_BYTES);
    } catch (error) {
      if (!(error instanceof Failure) || error.failure !== 'unreachable') throw error;
      if (!this.access.plainHttp && !mayUsePlainHttp(this.registry)) throw error;
      this.base = `http://${this.registry}`;
      ping = await this.get(`${this.base}/v2/`, {}, MAX_ERROR_BYTES);
    }
    if (ping.status === 200) return;
    if (ping.status !== 401)
      throw new Failure('invalid', `${this.registry} is not a container registry (it answered ${ping.status} to /v2/)`);
    const challenge = parseChallenge(header(ping.headers, 'www-authenticate'));
    if (!challenge) throw new Failure('invalid', `${this.registry} asks for an authentication kapi does not speak`);
    const { credentials } = this.access;
    if (challenge.scheme === 'basic') {
      if (!credentials) throw new Failure('unauthorized', `${this.registry} needs credentials: name a pull secret`);
      this.authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
      return;
    }
    this.authorization = `Bearer ${await this.token(challenge.params)}`;
  }

  /** A pull token from the realm the registry named, asked with the pull secret's credentials when it has them. */
  private async token(params: Record<string, string>): Promise<string> {
    const realm = params.realm;
    let url: URL;
    try {
      url = new URL(realm ?? '');
    } catch {
      throw new Failure('invalid', `${this.registry} names no valid token realm`);
    }
    // credentials go over plain HTTP only where the registry itself is spoken to so
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && this.base.startsWith('http:')))
      throw new Failure('invalid', `${this.registry} names a token realm that is not HTTPS`);
    url.searchParams.set('scope', `repository:${this.repository}:pull`);
    url.searchParams.set('service', params.service ?? this.registry);
    const { credentials } = this.access;
    const headers: Record<string, string> = credentials
      ? { authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}` }
      : {};
    const answer = await this.get(url.toString(), headers, MAX_TOKEN_BYTES);
    if (answer.status === 401 || answer.status === 403)
      throw new Failure('unauthorized', `${this.registry}'s token service refused the credentials`);
    if (answer.status !== 200)
      throw new Failure('invalid', `${this.registry}'s token service answered ${answer.status}`);
    let token: unknown;
    try {
      const body = JSON.parse(answer.body.toString('utf8')) as { token?: unknown; access_token?: unknown };
      token = body.token ?? body.access_token;
    } catch {
      // handled below
    }
    if (typeof token !== 'string' || token === '' || /[\r\n]/.test(token))
      throw new Failure('invalid', `${this.registry}'s token service answered no token`);
    return token;
  }

  /** GET of a path of the repository, authorized; a refusal or a missing object a Failure. */
  async read(path: string, accept: string | undefined, maxBytes: number, what: string): Promise<Answer> {
    const headers: Record<string, string> = {
      ...(accept && { accept }),
      ...(this.authorization && { authorization: this.authorization }),
    };
    const answer = await this.get(`${this.base}/v2/${this.repository}/${path}`, headers, maxBytes);
    if (answer.status === 200) return answer;
    const { text, codes } = registryErrors(answer);
    if (answer.status === 404 || codes.some((c) => c === 'MANIFEST_UNKNOWN' || c === 'NAME_UNKNOWN'))
      throw new Failure('not-found', `${what} not found in ${this.registry} (${text})`);
    if (answer.status === 401 || answer.status === 403)
      throw new Failure('unauthorized', `${this.registry} refused to show ${what} (${text})`);
    throw new Failure('invalid', `${this.registry} answered ${what} with ${text}`);
  }

  /** One GET, redirects followed (the Authorization kept only on the same origin), the body read up to `maxBytes`. */
  private async get(url: string, headers: Record<string, string>, maxBytes: number): Promise<Answer> {
    let target = url;
    let sent = headers;
    for (let hop = 0; ; hop++) {
      let response: Dispatcher.ResponseData;
      try {
        response = await request(target, {
          method: 'GET',
          headers: sent,
          dispatcher: this.client.dispatcher(this.access.insecure === true),
          signal: this.signal,
        });
      } catch (error) {
        if (this.signal.aborted) throw new Failure('timeout', `${this.registry} did not answer in time`);
        const cause =
          (error as { cause?: { code?: string }; code?: string })?.cause?.code ?? (error as { code?: string })?.code;
        throw new Failure('unreachable', `${this.registry} could not be reached${cause ? ` (${cause})` : ''}`);
      }
      const location = header(response.headers, 'location');
      if (response.statusCode >= 300 && response.statusCode < 400 && location) {
        await response.body.dump();
        if (hop >= MAX_REDIRECTS)
          throw new Failure('invalid', `${this.registry} redirected more than ${MAX_REDIRECTS} times`);
        const next = new URL(location, target);
        if (next.protocol !== 'https:' && next.protocol !== 'http:')
          throw new Failure('invalid', `${this.registry} redirected to a URL that is not HTTP`);
        if (next.origin !== new URL(target).origin) {
          const { authorization: _dropped, ...rest } = sent;
          sent = rest;
        }
        target = next.toString();
        continue;
      }
      const chunks: Buffer[] = [];
      let length = 0;
      try {
        for await (const chunk of response.body as AsyncIterable<Buffer>) {
          length += chunk.length;
          if (length > maxBytes) {
            response.body.destroy();
            throw new Failure('invalid', `${this.registry} answered more than ${maxBytes} bytes`);
          }
          chunks.push(chunk);
        }
      } catch (error) {
        if (error instanceof Failure) throw error;
        if (this.signal.aborted) throw new Failure('timeout', `${this.registry} did not answer in time`);
        throw new Failure('unreachable', `${this.registry} broke off its answer`);
      }
      return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks) };
    }
  }
}

export class RegistryClient {
  private readonly options: Required<RegistryClientOptions>;
  private readonly verifying: Agent;
  private insecureAgent: Agent | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: RegistryClientOptions = {}) {
    this.options = { ...DEFAULTS, ...options };
    this.verifying = new Agent({ connect: { timeout: this.options.timeoutMs } });
  }

  /** @internal the dispatcher of a session: verifying TLS, or not when the pull secret says so. */
  dispatcher(insecure: boolean): Dispatcher {
    if (!insecure) return this.verifying;
    this.insecureAgent ??= new Agent({ connect: { timeout: this.options.timeoutMs, rejectUnauthorized: false } });
    return this.insecureAgent;
  }

  /** Closes its connections; again is nothing (a server stopped twice). */
  close(): Promise<void> {
    this.closing ??= Promise.all([this.verifying.close(), this.insecureAgent?.close()]).then(() => undefined);
    return this.closing;
  }

  private async session<T>(
    registry: string,
    repository: string,
    access: RegistryAccess,
    work: (session: RegistrySession) => Promise<T>,
  ): Promise<T | LookupFailure> {
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const session = new RegistrySession(this, registry, repository, access, signal);
      await session.open();
      return await work(session);
    } catch (error) {
      if (error instanceof Failure) return { failure: error.failure, message: error.message };
      if (signal.aborted) return { failure: 'timeout', message: `${registry} did not answer in time` };
      throw error;
    }
  }

  /** The image's config, as its registry holds it: the index's linux/amd64 child's for a multi-platform image. */
  imageConfig(image: ImageReference, access: RegistryAccess): Promise<Record<string, unknown> | LookupFailure> {
    const name = `image ${image.repository}${image.digest ? `@${image.digest}` : `:${image.tag}`}`;
    return this.session(image.registry, image.repository, access, async (session) => {
      let reference = referenceOf(image);
      let accept = MANIFEST_ACCEPT;
      let expectedDigest = image.digest;
      for (let depth = 0; depth < 2; depth++) {
        const manifest = await session.read(`manifests/${reference}`, accept, this.options.maxManifestBytes, name);
        if (expectedDigest && sha256(manifest.body) !== expectedDigest)
          throw new Failure('invalid', `the manifest of ${name} does not match its digest`);
        const step = manifestStep(header(manifest.headers, 'content-type'), manifest.body.toString('utf8'));
        if ('error' in step) throw new Failure('invalid', `${name}: ${step.error}`);
        if ('child' in step) {
          reference = expectedDigest = step.child.digest;
          accept = step.child.mediaType;
          continue;
        }
        const blob = await session.read(`blobs/${step.config.digest}`, undefined, this.options.maxConfigBytes, name);
        if (sha256(blob.body) !== step.config.digest)
          throw new Failure('invalid', `the config of ${name} does not match its digest`);
        const config = imageConfigAnswer(blob.body.toString('utf8'));
        if ('error' in config) throw new Failure('invalid', `${name}: ${config.error}`);
        return config;
      }
      throw new Failure('invalid', `${name}: an index within an index is not read`);
    });
  }

  /** The repository's tags, in the registry's order, up to `maxTagPages` pages. */
  tags(registry: string, repository: string, access: RegistryAccess): Promise<string[] | LookupFailure> {
    return this.session(registry, repository, access, async (session) => {
      const tags: string[] = [];
      let path: string | undefined = `tags/list?n=${this.options.tagPageSize}`;
      for (let page = 0; path && page < this.options.maxTagPages; page++) {
        const answer = await session.read(
          path,
          'application/json',
          this.options.maxManifestBytes,
          `repository ${repository}`,
        );
        let body: { tags?: unknown };
        try {
          body = JSON.parse(answer.body.toString('utf8')) as { tags?: unknown };
        } catch {
          throw new Failure('invalid', `${registry} answered a tag list that is not JSON`);
        }
        if (Array.isArray(body.tags)) tags.push(...body.tags.filter((t): t is string => typeof t === 'string'));
        path = nextPage(header(answer.headers, 'link'), repository);
      }
      return tags;
    });
  }
}

/** The next page of a tag list (`Link: </v2/<repo>/tags/list?n=1000&last=x>; rel="next"`), as a path of the repository. */
export function nextPage(link: string | undefined, repository: string): string | undefined {
  const target = link && /<([^>]+)>\s*;\s*rel="?next"?/i.exec(link)?.[1];
  if (!target) return undefined;
  const url = new URL(target, 'http://registry.invalid');
  const prefix = `/v2/${repository}/`;
  if (!url.pathname.startsWith(prefix)) return undefined;
  return `${url.pathname.slice(prefix.length)}${url.search}`;
}
