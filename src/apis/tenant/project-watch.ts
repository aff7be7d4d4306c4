import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { RequestAuthenticator } from '../../auth/authenticate.js';
import type { Authorizer, UserInfo } from '../../auth/identity.js';
import { isObjectName } from '../../auth/kube-names.js';
import { WORKSPACE_LABEL, type WatchedNamespaces } from '../../kube/namespace-cache.js';
import type { Logger } from '../../observability/logger.js';
import type { StreamRegistry } from '../../proxy/stream-registry.js';
import { ForbiddenError } from '../../server/errors.js';
import { handleFilteredWatch } from '../filtered-watch.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../resources/v1alpha3/kinds/kind-table.js';
import type { ResourceListing } from '../resources/v1alpha3/listing/resource-listing.js';
import { TenantMemberships } from './memberships.js';

/**
 * Memberships are read from kapi's caches again this often (no review of the cluster's: the caller's rights are asked
 * once, at the start), so a project given or taken shows within it.
 */
const RECHECK_MS = 2_000;
/** kube-apiserver ends a watch after a while (its --min-request-timeout, randomized); so does kapi. */
const WATCH_LIFETIME_MS = 30 * 60_000;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export interface ProjectWatchDeps {
  authenticate: RequestAuthenticator;
  authorizer: Authorizer;
  listing: ResourceListing;
  namespaces: WatchedNamespaces;
  logger: Logger;
  registry?: StreamRegistry;
}

/**
 * The workspace a watch of namespaces asks for (`/api/v1/watch/namespaces?labelSelector=kapi.io/workspace=<ws>`, the
 * console's live project list), or undefined when it is another watch (pure).
 */
export function projectWatchOf(url: string): string | undefined {
  const parsed = new URL(url, 'http://kapi');
  const watch = parsed.searchParams.get('watch');
  const isWatch =
    parsed.pathname === '/api/v1/watch/namespaces' ||
    (parsed.pathname === '/api/v1/namespaces' && (watch === 'true' || watch === '1'));
  if (!isWatch || parsed.searchParams.has('fieldSelector')) return undefined;
  const selector = parsed.searchParams.get('labelSelector') ?? '';
  const match = /^\s*kapi\.io\/workspace\s*==?\s*([^,\s]+)\s*$/.exec(selector);
  return match && isObjectName(match[1]!) ? match[1] : undefined;
}

/** A watch event as kube-apiserver sends one over a WebSocket. */
export function watchEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: unknown): string {
  return JSON.stringify({ type, object });
}

/**
 * A member's live project list (the console's WebSocket watch of a workspace's namespaces): one who may watch every
 * namespace gets kube-apiserver's own watch (relayed); anyone else, the workspace's projects they may see (as kapi's
 * project list shows them), from kapi's caches: ADDED for each at first, then ADDED, MODIFIED and DELETED as
 * namespaces change and as projects are given and taken. Someone with no project in the workspace is refused (403),
 * as kube-apiserver refuses them a watch of every namespace.
 */
export class ProjectWatches {
  private readonly server = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 4096 });
  private readonly memberships: TenantMemberships;
  private readonly namespacesKind = KINDS_BY_RESOURCE.get('namespaces') as KindDefinition;

  constructor(
    private readonly deps: ProjectWatchDeps,
    /** kube-apiserver's watch, for one who may watch every namespace. */
    private readonly relay: (req: IncomingMessage, socket: Duplex, head: Buffer) => void,
  ) {
    this.memberships = new TenantMemberships(deps.listing);
  }

  matches(req: IncomingMessage): boolean {
    return (
      (req.headers.upgrade ?? '').toLowerCase() === 'websocket' &&
      (req.url ?? '').startsWith('/api/v1/') &&
      projectWatchOf(req.url ?? '') !== undefined
    );
  }

  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const workspace = projectWatchOf(req.url ?? '') as string;
    let everything = false;
    handleFilteredWatch(req, socket, head, {
      authenticate: this.deps.authenticate,
      logger: this.deps.logger,
      server: this.server,
      relay: this.relay,
      what: { path: '/api/v1/watch/namespaces', fields: { workspace } },
      decide: async (user) => {
        const everyNamespace = await this.deps.authorizer.authorize(user, { verb: 'watch', resource: 'namespaces' });
        if (everyNamespace.allowed) return 'relay';
        const first = await this.memberships.visibleProjects(
          this.deps.authorizer,
          user,
          workspace,
          this.inWorkspace(workspace),
        );
        if (first.names.length === 0)
          throw new ForbiddenError(
            `namespaces is forbidden: User "${user.username}" cannot watch resource "namespaces" in API group "" at ` +
              `the cluster scope, and has no project in workspace "${workspace}"`,
            { kind: 'namespaces', group: '' },
          );
        everything = first.everything;
        return 'serve';
      },
      serve: (ws, user) => void this.serve(ws, user, workspace, everything),
    });
  }

  private inWorkspace(workspace: string): string[] {
    return this.deps.namespaces
      .list()
      .filter((ns) => ns.workspace === workspace)
      .map((ns) => ns.name);
  }

  /** The workspace's projects the caller may see now: its rights were asked once (at the start), memberships now. */
  private async visible(user: UserInfo, workspace: string, everything: boolean): Promise<Set<string>> {
    if (everything) return new Set(this.inWorkspace(workspace));
    const own = await this.memberships.projectsOf(user.username);
    return new Set(this.inWorkspace(workspace).filter((name) => own.has(name)));
  }

  private async objectOf(name: string): Promise<Raw | undefined> {
    const stored = await this.deps.listing.readCached(this.namespacesKind, undefined, name);
    return stored ? { kind: 'Namespace', apiVersion: 'v1', ...JSON.parse(stored.toString('utf8')) } : undefined;
  }

  /** Sends what changed since `sent`: projects that became visible, changed, or went. One pass at a time. */
  private async serve(ws: WebSocket, user: UserInfo, workspace: string, everything: boolean): Promise<void> {
    /** What the watcher was last sent of each project it sees, by name (its resourceVersion tells a change). */
    const sent = new Map<string, Raw>();
    let closed = false;
    let running: Promise<void> | undefined;
    let again = false;
    const pass = async () => {
      const visible = await this.visible(user, workspace, everything);
      for (const [name, object] of sent) {
        if (visible.has(name)) continue;
        sent.delete(name);
        if (!closed) ws.send(watchEvent('DELETED', object));
      }
      for (const name of visible) {
        const object = await this.objectOf(name);
        if (!object || object.metadata?.labels?.[WORKSPACE_LABEL] !== workspace) continue;
        const before = sent.get(name);
        if (before && before.metadata?.resourceVersion === object.metadata?.resourceVersion) continue;
        sent.set(name, object);
        if (!closed) ws.send(watchEvent(before ? 'MODIFIED' : 'ADDED', object));
      }
    };
    const changed = () => {
      if (closed) return;
      if (running) {
        again = true;
        return;
      }
      running = pass()
        .catch((error: unknown) =>
          this.deps.logger.warn('a project watch pass failed', {
            error: error instanceof Error ? error.message : String(error),
          }),
        )
        .finally(() => {
          running = undefined;
          if (again) {
            again = false;
            changed();
          }
        });
    };
    const unsubscribe = (['added', 'modified', 'deleted'] as const).map((event) =>
      this.deps.namespaces.on(event, changed),
    );
    const recheck = setInterval(changed, RECHECK_MS);
    const lifetime = setTimeout(() => ws.close(1000), WATCH_LIFETIME_MS);
    const unregister = this.deps.registry?.register(user, () => ws.close(1000));
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      closed = true;
      for (const off of unsubscribe) off();
      clearInterval(recheck);
      clearTimeout(lifetime);
      unregister?.();
    });
    changed();
  }

  /** Ends every open watch (shutdown). */
  closeAll(): void {
    for (const client of this.server.clients) client.close(1001);
  }
}
