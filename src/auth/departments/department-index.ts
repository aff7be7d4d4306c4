import type { KubeClient } from '../../kube/client.js';
import { Reflector } from '../../kube/reflector.js';
import type { Logger } from '../../observability/logger.js';
import { departmentGroup, departmentsByUser } from './departments.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export const GROUPS_PATH = '/apis/iam.kapi.io/v1alpha2/groups';
export const GROUP_BINDINGS_PATH = '/apis/iam.kapi.io/v1alpha2/groupbindings';
const NONE: readonly string[] = Object.freeze([]);

/**
 * Which departments each user is in, from watched Groups and GroupBindings, as the RBAC groups kapi asserts
 * (`kapi:department:<group>`). A user's answer is the same frozen array until that user's departments change, so
 * what is derived from it per session is derived again only then.
 */
export class DepartmentIndex {
  private readonly groups: Reflector<Raw>;
  private readonly bindings: Reflector<Raw>;
  private readonly workspaces: Reflector<{ name: string; uid: string }>;
  private byUser = new Map<string, readonly string[]>();
  private pending: NodeJS.Timeout | undefined;

  constructor(client: KubeClient, logger: Logger) {
    const keep = (raw: Raw) => raw;
    this.groups = new Reflector<Raw>({ client, logger, name: 'departments', listPath: GROUPS_PATH, transform: keep });
    this.bindings = new Reflector<Raw>({
      client,
      logger,
      name: 'department-members',
      listPath: GROUP_BINDINGS_PATH,
      transform: keep,
    });
    this.workspaces = new Reflector<{ name: string; uid: string }>({
      client,
      logger,
      name: 'department-workspaces',
      listPath: '/apis/tenant.kapi.io/v1alpha2/workspacetemplates',
      transform: (raw: Raw) => ({ name: String(raw?.metadata?.name), uid: String(raw?.metadata?.uid) }),
    });
    for (const source of [this.groups, this.bindings, this.workspaces] as Reflector<unknown>[]) {
      for (const event of ['added', 'modified', 'deleted'] as const) source.on(event, () => this.rebuild());
      source.on('synced', () => this.rebuild());
    }
  }

  /** The RBAC groups of the user's departments. */
  of(username: string): readonly string[] {
    return this.byUser.get(username) ?? NONE;
  }

  start(): void {
    this.groups.start();
    this.bindings.start();
    this.workspaces.start();
  }

  waitForSync(timeoutMs: number): Promise<void> {
    return Promise.all([
      this.groups.waitForSync(timeoutMs),
      this.bindings.waitForSync(timeoutMs),
      this.workspaces.waitForSync(timeoutMs),
    ]).then(() => {
      this.recompute();
    });
  }

  async stop(): Promise<void> {
    clearTimeout(this.pending);
    await Promise.all([this.groups.stop(), this.bindings.stop(), this.workspaces.stop()]);
  }

  /** Changes close together are folded into one recomputation (a department of 500 users is 500 events). */
  private rebuild(): void {
    this.pending ??= setTimeout(() => {
      this.pending = undefined;
      this.recompute();
    }, 10);
    this.pending.unref?.();
  }

  private recompute(): void {
    const next = new Map<string, readonly string[]>();
    const uids = new Map(this.workspaces.list().map((w) => [w.name, w.uid]));
    for (const [user, departments] of departmentsByUser(this.groups.list(), this.bindings.list(), uids)) {
      const groups = departments.map(departmentGroup);
      const before = this.byUser.get(user);
      // the same array while the user's departments are the same
      next.set(user, before && before.join('\n') === groups.join('\n') ? before : Object.freeze(groups));
    }
    this.byUser = next;
  }
}
