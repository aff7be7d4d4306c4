import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { RequestAuthenticator } from '../../../auth/authenticate.js';
import type { Authorizer } from '../../../auth/identity.js';
import { isObjectName } from '../../../auth/kube-names.js';
import type { Logger } from '../../../observability/logger.js';
import type { StreamRegistry } from '../../../proxy/stream-registry.js';
import { ForbiddenError } from '../../../server/errors.js';
import { handleFilteredWatch } from '../../filtered-watch.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../../resources/v1alpha3/kinds/kind-table.js';
import type { ResourceListing } from '../../resources/v1alpha3/listing/resource-listing.js';
import { watchEvent } from '../../tenant/project-watch.js';

/** The departments are read from kapi's cache again this often: the console refetches the tree on any event. */
const RECHECK_MS = 1_000;
const WATCH_LIFETIME_MS = 30 * 60_000;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export interface DepartmentWatchDeps {
  authenticate: RequestAuthenticator;
  authorizer: Authorizer;
  listing: ResourceListing;
  logger: Logger;
  registry?: StreamRegistry;
}

/**
 * The workspace a watch of departments asks for (`/apis/iam.kapi.io/v1alpha2/watch/groups?labelSelector=
 * kapi.io/workspace=<ws>`, the console's live department tree), or undefined when it is another watch (pure).
 */
export function departmentWatchOf(url: string): string | undefined {
  const parsed = new URL(url, 'http://kapi');
  const watch = parsed.searchParams.get('watch');
  const isWatch =
    parsed.pathname === '/apis/iam.kapi.io/v1alpha2/watch/groups' ||
    (parsed.pathname === '/apis/iam.kapi.io/v1alpha2/groups' && (watch === 'true' || watch === '1'));
  if (!isWatch || parsed.searchParams.has('fieldSelector')) return undefined;
  const match = /^\s*kapi\.io\/workspace\s*==?\s*([^,\s]+)\s*$/.exec(parsed.searchParams.get('labelSelector') ?? '');
  return match && isObjectName(match[1]!) ? match[1] : undefined;
}

/**
 * A workspace's live department tree: one who may watch every Group gets kube-apiserver's own watch (relayed); one
 * who may list the workspace's departments (`workspacetemplates/groups`, its admin or viewer) gets them from kapi's
 * cache, ADDED for each at first, then ADDED, MODIFIED and DELETED as they change; anyone else 403.
 */
export class DepartmentWatches {
  private readonly server = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 4096 });
  private readonly groups = KINDS_BY_RESOURCE.get('groups') as KindDefinition;

  constructor(
    private readonly deps: DepartmentWatchDeps,
    private readonly relay: (req: IncomingMessage, socket: Duplex, head: Buffer) => void,
  ) {}

  matches(req: IncomingMessage): boolean {
    return (
      (req.headers.upgrade ?? '').toLowerCase() === 'websocket' &&
      (req.url ?? '').startsWith('/apis/iam.kapi.io/') &&
      departmentWatchOf(req.url ?? '') !== undefined
    );
  }

  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const workspace = departmentWatchOf(req.url ?? '') as string;
    handleFilteredWatch(req, socket, head, {
      authenticate: this.deps.authenticate,
      logger: this.deps.logger,
      server: this.server,
      relay: this.relay,
      what: { path: '/apis/iam.kapi.io/v1alpha2/watch/groups', fields: { workspace } },
      decide: async (user) => {
        const everyGroup = await this.deps.authorizer.authorize(user, {
          verb: 'watch',
          group: 'iam.kapi.io',
          resource: 'groups',
        });
        if (everyGroup.allowed) return 'relay';
        const departments = await this.deps.authorizer.authorize(user, {
          verb: 'list',
          group: 'tenant.kapi.io',
          resource: 'workspacetemplates',
          subresource: 'groups',
          name: workspace,
        });
        if (!departments.allowed)
          throw new ForbiddenError(
            `groups.iam.kapi.io is forbidden: User "${user.username}" cannot watch resource "groups" in API group ` +
              `"iam.kapi.io" at the cluster scope, nor list the departments of workspace "${workspace}"`,
            { kind: 'groups', group: 'iam.kapi.io' },
          );
        return 'serve';
      },
      serve: (ws, user) =>
        this.serve(
          ws,
          workspace,
          this.deps.registry?.register(user, () => ws.close(1000)),
        ),
    });
  }

  private serve(ws: WebSocket, workspace: string, unregister?: () => void): void {
    const sent = new Map<string, Raw>();
    let closed = false;
    let running = false;
    const pass = async () => {
      if (running || closed) return;
      running = true;
      try {
        const now = new Map(
          ((await this.deps.listing.cachedWithField(this.groups, 'workspace', new Set([workspace]))) as Raw[]).map(
            (group) => [group.metadata.name as string, { kind: 'Group', apiVersion: 'iam.kapi.io/v1alpha2', ...group }],
          ),
        );
        for (const [name, object] of sent) {
          if (now.has(name)) continue;
          sent.delete(name);
          if (!closed) ws.send(watchEvent('DELETED', object));
        }
        for (const [name, object] of now) {
          const before = sent.get(name);
          if (before && before.metadata?.resourceVersion === object.metadata?.resourceVersion) continue;
          sent.set(name, object);
          if (!closed) ws.send(watchEvent(before ? 'MODIFIED' : 'ADDED', object));
        }
      } catch (error) {
        this.deps.logger.warn('a department watch pass failed', {
          error: error instanceof Error ? error.message : String(error),
        });
      } finally {
        running = false;
      }
    };
    const recheck = setInterval(() => void pass(), RECHECK_MS);
    const lifetime = setTimeout(() => ws.close(1000), WATCH_LIFETIME_MS);
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      closed = true;
      clearInterval(recheck);
      clearTimeout(lifetime);
      unregister?.();
    });
    void pass();
  }

  closeAll(): void {
    for (const client of this.server.clients) client.close(1001);
  }
}
