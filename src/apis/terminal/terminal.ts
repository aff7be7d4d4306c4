import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { RequestAuthenticator } from '../../auth/authenticate.js';
import type { Authorizer, UserInfo } from '../../auth/identity.js';
import { isLabelName, isObjectName } from '../../auth/kube-names.js';
import type { KubeConnection } from '../../kube/connection.js';
import type { Logger } from '../../observability/logger.js';
import { writeStatusAndClose } from '../../proxy/raw-http.js';
import type { StreamRegistry } from '../../proxy/stream-registry.js';
import { ApiError, BadRequestError, ForbiddenError, NotFoundError, statusBody } from '../../server/errors.js';
import { callerHeaders, requireRight } from '../caller.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../resources/v1alpha3/kinds/kind-table.js';
import type { ResourceListing } from '../resources/v1alpha3/listing/resource-listing.js';
import { presentedToken } from '../../auth/tokens/bearer-token.js';
import { ToolboxHandshake, TOOLBOX_CONTAINER, toolboxCommand, toolboxPodName } from './kubectl-toolbox.js';
import type { KubectlToolboxes } from './kubectl-toolboxes.js';
import {
  EXEC_PROTOCOL,
  RESIZE,
  closeReason,
  commandTarget,
  consoleMessage,
  consoleOutput,
  execFrame,
  execTarget,
  resizeFrame,
  stdinFrame,
} from './framing.js';

export const TERMINAL_BASE = '/kapis/terminal.kapi.io/v1alpha2';
const POD_TERMINAL = /^\/kapis\/terminal\.kapi\.io\/v1alpha2\/namespaces\/([^/]+)\/pods\/([^/]+)\/exec$/;
/** Terminal messages are keystrokes and window sizes: a larger one is no terminal's. */
const MAX_MESSAGE_BYTES = 64 * 1024;
/** Output the browser has not taken yet, past which the terminal is closed rather than held in memory. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** Keystrokes sent before kube-apiserver's exec is open are held, up to this many. */
const MAX_EARLY_MESSAGES = 256;
/** A kubectl pod's shell says it reads the token within this long, or it is not kapi's toolbox shell. */
const TOOLBOX_HANDSHAKE_MS = 20_000;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export interface TerminalDeps {
  authenticate: RequestAuthenticator;
  authorizer: Authorizer;
  /** The pods, to refuse a terminal for a pod or container that is not there before any upgrade. */
  listing: ResourceListing;
  /** kube-apiserver: its address, TLS settings and kapi's credentials (the caller is impersonated). */
  connection: KubeConnection;
  logger: Logger;
  /** Where an open terminal is registered, so a revoked session or a deleted user cuts it. */
  registry?: StreamRegistry;
  /** The users' kubectl pods (the console's kubectl toolbox), when kapi serves them. */
  toolboxes?: KubectlToolboxes;
}

/** How a checked terminal is opened: as the caller, or (their own kubectl pod) as kapi with the caller's token. */
type TerminalMode = { kind: 'caller' } | { kind: 'toolbox'; podUid: string };

export interface TerminalRequest {
  namespace: string;
  pod: string;
  container?: string;
  shell?: string;
}

/** The path's terminal, or undefined when the path is not a pod's terminal. */
export function terminalRequestOf(url: string): TerminalRequest | undefined {
  const parsed = new URL(url, 'http://kapi');
  const match = POD_TERMINAL.exec(parsed.pathname);
  if (!match) return undefined;
  let namespace: string;
  let pod: string;
  try {
    namespace = decodeURIComponent(match[1]!);
    pod = decodeURIComponent(match[2]!);
  } catch {
    return undefined;
  }
  const container = parsed.searchParams.get('container') || undefined;
  const shell = parsed.searchParams.get('shell') || undefined;
  return { namespace, pod, ...(container && { container }), ...(shell && { shell }) };
}

/**
 * The console's container terminal (KubeSphere's `terminal.kubesphere.io` WebSocket): an exec into the container as
 * the caller. Before any upgrade, the caller must be allowed `create pods/exec` there (a SubjectAccessReview, as
 * KubeSphere asks) and the pod and container must exist; kube-apiserver then decides the exec itself, as the caller
 * (impersonated). The console's JSON messages become `v4.channel.k8s.io` frames and back; a refusal of kube-apiserver
 * (any answer but 101) is shown in the terminal and closes it with the reason. Nodes' shells are not served: they need
 * a privileged pod on the node.
 */
export class PodTerminals {
  private readonly server = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: MAX_MESSAGE_BYTES,
  });
  private readonly agent: http.Agent;
  private readonly pods = KINDS_BY_RESOURCE.get('pods') as KindDefinition;

  constructor(private readonly deps: TerminalDeps) {
    // terminals are long-lived and few: sockets of their own, with the connection's TLS settings
    const secure = deps.connection.server.protocol === 'https:';
    this.agent = secure
      ? new https.Agent({ ...(deps.connection.agent as https.Agent).options, keepAlive: false })
      : new http.Agent({ keepAlive: false });
  }

  /** Whether an upgrade is a terminal's (for the listener's upgrade dispatch). */
  matches(req: IncomingMessage): boolean {
    return (req.url ?? '').startsWith(`${TERMINAL_BASE}/`) && terminalRequestOf(req.url ?? '') !== undefined;
  }

  /** What a terminal needs before it opens: the right, the pod, the container (each refusal an `ApiError`). */
  async check(user: UserInfo, request: TerminalRequest): Promise<TerminalMode> {
    const { namespace, pod, container } = request;
    const details = { name: pod, group: '', kind: 'pods' };
    if (!isLabelName(namespace) || !isObjectName(pod)) throw new NotFoundError(`pods "${pod}" not found`, details);
    const toolboxes = this.deps.toolboxes;
    if (toolboxes && namespace === toolboxes.namespace && pod === toolboxPodName(user.username)) {
      // the caller's own kubectl pod: kapi opens it (the caller has no rights in kapi's namespace), for one who may
      // still use the toolbox
      const podUid = await toolboxes.runningPodUid(user.username);
      if (podUid) {
        await requireRight(this.deps.authorizer, user, {
          verb: 'get',
          group: 'resources.kapi.io',
          resource: 'users',
          subresource: 'kubectl',
          name: user.username,
        });
        if (container && container !== TOOLBOX_CONTAINER)
          throw new BadRequestError(`container ${container} is not valid for pod ${pod}`, details);
        return { kind: 'toolbox', podUid };
      }
    }
    await requireRight(this.deps.authorizer, user, {
      verb: 'create',
      group: '',
      resource: 'pods',
      subresource: 'exec',
      namespace,
      name: pod,
    });
    const stored = await this.deps.listing.readCached(this.pods, namespace, pod);
    if (!stored) throw new NotFoundError(`pods "${pod}" not found`, details);
    const object = JSON.parse(stored.toString('utf8')) as Raw;
    const names = [
      ...(object?.spec?.containers ?? []),
      ...(object?.spec?.initContainers ?? []),
      ...(object?.spec?.ephemeralContainers ?? []),
    ].map((c: Raw) => c?.name);
    if (container && !names.includes(container))
      throw new BadRequestError(`container ${container} is not valid for pod ${pod}`, details);
    const phase = object?.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed')
      throw new BadRequestError(`cannot exec into a container in a completed pod; current phase is ${phase}`, details);
    return { kind: 'caller' };
  }

  /** A terminal's upgrade: checked, then the console's WebSocket accepted and kube-apiserver's exec opened. */
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const request = terminalRequestOf(req.url ?? '') as TerminalRequest;
    const path = new URL(req.url ?? '/', 'http://kapi').pathname;
    let user: UserInfo | undefined;
    const audit = (status: number) =>
      this.deps.logger.info('request', {
        audit: true,
        user: user?.username,
        verb: 'GET',
        path,
        status,
        upgrade: 'websocket',
      });
    // the token as presented: authenticating takes a subprotocol's token out of the request
    const presented = presentedToken(req.headers);
    (async () => {
      user = await this.deps.authenticate(req);
      const mode = await this.check(user, request);
      if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket')
        throw new BadRequestError('a terminal is a WebSocket');
      const caller = user;
      let session: Session;
      if (mode.kind === 'toolbox') {
        // the token the caller presented (authenticated just now) is the one its kubectl acts with
        if (!presented || !('token' in presented)) throw new BadRequestError('the terminal’s request carries no token');
        const toolboxes = this.deps.toolboxes as KubectlToolboxes;
        const settings = toolboxes.current();
        const { podUid } = mode;
        session = {
          target: commandTarget(
            request.namespace,
            request.pod,
            TOOLBOX_CONTAINER,
            toolboxCommand(settings, caller.username),
          ),
          headers: {},
          token: presented.token,
          // the pod checked is still the one the exec reached (not one made again meanwhile)
          stillOwn: async () => (await toolboxes.runningPodUid(caller.username)) === podUid,
        };
      } else {
        const impersonation = callerHeaders(user);
        if (!impersonation) throw new ForbiddenError(`user "${user.username}" cannot be impersonated in headers`);
        session = {
          target: execTarget(request.namespace, request.pod, request.container, request.shell),
          headers: impersonation,
        };
      }
      this.server.handleUpgrade(req, socket, head, (client) => {
        audit(101);
        void this.open(client, caller, session);
      });
    })().catch((error: unknown) => {
      const status =
        error instanceof ApiError ? error.toStatus() : statusBody(500, 'InternalError', 'an internal error occurred');
      if (!(error instanceof ApiError))
        this.deps.logger.error('terminal failed', {
          path,
          error: error instanceof Error ? error.message : String(error),
        });
      audit(status.code);
      writeStatusAndClose(socket, status);
    });
  }

  /** The session: kube-apiserver's exec opened as the caller, the two framings translated until either side ends. */
  private async open(client: WebSocket, user: UserInfo, session: Session): Promise<void> {
    const early: Buffer[] = [];
    /** A kubectl pod's shell: keystrokes wait until the token was sent, output until the shell reads it. */
    const handshake = session.token === undefined ? undefined : new ToolboxHandshake();
    let tokenSent = false;
    let handshakeTimer: NodeJS.Timeout | undefined;
    /** kube-apiserver's side, once asked for. */
    const link: { upstream?: WebSocket } = {};
    let ended = false;
    const end = (code: number, reason: string, shown?: string) => {
      if (ended) return;
      ended = true;
      clearTimeout(handshakeTimer);
      unregister?.();
      if (shown && client.readyState === WebSocket.OPEN) client.send(consoleOutput(`\r\n${shown}\r\n`, 'toast'));
      if (client.readyState === WebSocket.OPEN || client.readyState === WebSocket.CONNECTING)
        client.close(code, closeReason(reason));
      if (link.upstream && link.upstream.readyState !== WebSocket.CLOSED) link.upstream.close(1000);
    };
    const unregister = this.deps.registry?.register(user, () =>
      end(4401, 'the login session ended', 'the login session ended'),
    );
    client.on('error', () => client.terminate());
    client.on('close', () => end(1000, 'closed'));
    client.on('message', (raw: RawData, isBinary: boolean) => {
      const message = consoleMessage(isBinary ? '' : toBuffer(raw).toString('utf8'));
      if (message.op === 'invalid') return end(1003, message.reason, message.reason);
      const frame = message.op === 'stdin' ? stdinFrame(message.data) : resizeFrame(message.rows, message.cols);
      const held = message.op === 'stdin' && handshake !== undefined && !tokenSent;
      if (link.upstream?.readyState === WebSocket.OPEN && !held) link.upstream.send(frame);
      else if (early.length < MAX_EARLY_MESSAGES) early.push(frame);
      else
        end(
          1008,
          held ? 'the kubectl pod’s shell has not started yet' : 'kube-apiserver has not opened the terminal yet',
        );
    });

    let credentials: Record<string, string>;
    try {
      credentials = await this.deps.connection.authHeaders();
    } catch {
      return end(1011, 'kapi’s credentials for kube-apiserver are unavailable', 'kapi cannot reach the cluster now');
    }
    if (ended) return;
    const server = new URL(this.deps.connection.server.href);
    server.protocol = server.protocol === 'https:' ? 'wss:' : 'ws:';
    const upstream = new WebSocket(`${server.href.replace(/\/$/, '')}${session.target}`, [EXEC_PROTOCOL], {
      agent: this.agent,
      headers: { ...credentials, ...session.headers },
      perMessageDeflate: false,
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
      followRedirects: false,
      maxPayload: MAX_BUFFERED_BYTES,
    });
    link.upstream = upstream;
    const output = new StringDecoder('utf8');
    upstream.on('open', () => {
      if (handshake) {
        // window sizes go now; keystrokes after the token
        for (const frame of early) if (frame[0] === RESIZE) upstream.send(frame);
        early.splice(0, early.length, ...early.filter((frame) => frame[0] !== RESIZE));
        handshakeTimer = setTimeout(
          () => end(1011, 'the kubectl pod’s shell did not start', 'the kubectl pod’s shell did not start'),
          TOOLBOX_HANDSHAKE_MS,
        );
        return;
      }
      for (const frame of early.splice(0)) upstream.send(frame);
    });
    upstream.on('unexpected-response', (_req, res: IncomingMessage) => {
      // kube-apiserver's refusal (no 101): its Status says why
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < 64 * 1024) body += chunk;
      });
      res.on('end', () => {
        const code = res.statusCode ?? 502;
        let message = `kube-apiserver answered ${code}`;
        try {
          const status = JSON.parse(body) as { message?: unknown };
          if (typeof status.message === 'string') message = status.message;
        } catch {
          // not a Status: the code says it
        }
        // kapi's own credentials refused: the cluster's fault, not the caller's
        if (code === 401) message = 'kube-apiserver refused kapi’s credentials; try again later';
        end(1011, message, message);
      });
      res.on('error', () => end(1011, `kube-apiserver answered ${res.statusCode ?? 502}`));
    });
    upstream.on('error', () => end(1011, 'kube-apiserver could not be reached', 'kube-apiserver could not be reached'));
    upstream.on('message', (raw: RawData) => {
      const frame = execFrame(toBuffer(raw));
      if (frame.kind === 'output') {
        let text = output.write(frame.data);
        if (handshake) {
          const taken = handshake.take(text);
          text = taken.shown;
          if (taken.nowReady) {
            clearTimeout(handshakeTimer);
            // the shell reads it with echo off; then what the user typed meanwhile
            void (session.stillOwn?.() ?? Promise.resolve(true))
              .catch(() => false)
              .then((own) => {
                if (ended) return;
                if (!own)
                  return end(1011, 'the kubectl pod changed', 'the kubectl pod changed: open the terminal again');
                upstream.send(stdinFrame(`${session.token}\n`));
                tokenSent = true;
                for (const held of early.splice(0)) upstream.send(held);
              });
          }
        }
        if (text) client.send(consoleOutput(text));
        if (client.bufferedAmount > MAX_BUFFERED_BYTES) end(1008, 'the terminal’s output is not being read');
      } else if (frame.kind === 'outcome') {
        if (frame.success) end(1000, frame.message);
        else end(1011, frame.message, frame.message);
      }
    });
    upstream.on('close', () => end(1000, 'Process exited'));
  }

  /** Ends every open terminal (shutdown). */
  closeAll(): void {
    for (const client of this.server.clients) client.close(1001, 'kapi is shutting down');
  }
}

/** An exec to open: where at kube-apiserver, as whom, and for a kubectl pod the token its shell reads first. */
interface Session {
  target: string;
  headers: Record<string, string | string[]>;
  token?: string;
  stillOwn?: () => Promise<boolean>;
}

function toBuffer(raw: RawData): Buffer {
  if (Buffer.isBuffer(raw)) return raw;
  if (Array.isArray(raw)) return Buffer.concat(raw);
  return Buffer.from(raw);
}
