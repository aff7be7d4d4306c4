/**
 * The run's ClusterConfiguration as the identity cases change it: through the Kubernetes API, as `kubectl patch`
 * would. A change is known to be served when a probe login answers with its marker: every change sets a distinct
 * accessTokenMaxAge, and a snapshot applies as a whole, so the marker's `expires_in` proves the rest applied too.
 */
import type { KubeClient } from '../../src/kube/client.js';
import { parseDuration } from '../../src/config/duration.js';
import { waitFor } from './harness.js';
import { DEFAULT_CLIENT, type ClientCredentials, type KapiCaller } from './identity-http.js';

export interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
}

export interface ConfigurationObject {
  metadata: { generation?: number; resourceVersion?: string };
  spec: { authentication?: Record<string, unknown> } & Record<string, unknown>;
  status?: { conditions?: Condition[] };
}

export class ConfigurationUnderTest {
  private original: ConfigurationObject['spec'] | undefined;
  private changes = 0;

  constructor(
    private readonly admin: KubeClient,
    private readonly where: { namespace: string; name: string },
    private readonly caller: KapiCaller,
    private readonly probe: { username: string; password: string },
  ) {}

  get path(): string {
    return `/apis/installer.kapi.io/v1alpha1/namespaces/${this.where.namespace}/clusterconfigurations/${this.where.name}`;
  }

  /** Remembers the spec as the harness made it, for `restore`. */
  async load(): Promise<void> {
    this.original = (await this.read()).spec;
  }

  read(): Promise<ConfigurationObject> {
    return this.admin.request<ConfigurationObject>({ path: this.path });
  }

  /** A JSON merge patch of `spec.authentication` (lists, such as the clients, are replaced whole). */
  patchAuthentication(authentication: Record<string, unknown>): Promise<ConfigurationObject> {
    return this.admin.request<ConfigurationObject>({
      method: 'PATCH',
      path: this.path,
      contentType: 'application/merge-patch+json',
      body: { spec: { authentication } },
    });
  }

  /** Patches `authentication` plus a marker, and waits until each replica serves it (probing with `client`). */
  async apply(authentication: Record<string, unknown>, replicas: string[], client = DEFAULT_CLIENT): Promise<void> {
    const expiresIn = 7200 - ++this.changes;
    await this.patchAuthentication({ ...authentication, accessTokenMaxAge: `${expiresIn}s` });
    await this.servedBy(replicas, expiresIn, client);
  }

  /** Puts the harness's spec back and waits until each replica serves it again. */
  async restore(replicas: string[]): Promise<ConfigurationObject> {
    if (!this.original) throw new Error('load() first');
    const restored = await this.admin.request<ConfigurationObject>({
      method: 'PATCH',
      path: this.path,
      contentType: 'application/json-patch+json',
      body: [{ op: 'replace', path: '/spec', value: this.original }],
    });
    const accessTokenMaxAge = this.original.authentication?.accessTokenMaxAge;
    const expiresIn = typeof accessTokenMaxAge === 'string' ? parseDuration(accessTokenMaxAge) : 7200;
    await this.servedBy(replicas, expiresIn, DEFAULT_CLIENT);
    return restored;
  }

  /** Waits until the object's condition `type` has `status` for `generation`, and returns it. */
  async condition(type: string, status: string, generation: number | undefined) {
    let found: Condition | undefined;
    await waitFor(async () => {
      const object = await this.read();
      found = object.status?.conditions?.find((c) => c.type === type);
      return found?.status === status && found.observedGeneration === generation;
    });
    return found!;
  }

  private async servedBy(replicas: string[], expiresIn: number, client: ClientCredentials): Promise<void> {
    for (const url of replicas) {
      await waitFor(async () => {
        const answer = await this.caller.token<{ expires_in?: number }>(url, {
          grant_type: 'password',
          username: this.probe.username,
          password: this.probe.password,
          client_id: client.id,
          client_secret: client.secret,
        });
        return answer.status === 200 && answer.body.expires_in === expiresIn;
      });
    }
  }
}
