import { Router } from 'express';
import { forbidden } from '../../../auth/authorization/access-guard.js';
import type { Authorizer, ResourceAttributes } from '../../../auth/identity.js';
import type { KubeClient } from '../../../kube/client.js';
import { mountOperation } from '../../../openapi/operation.js';
import { BadRequestError, NotFoundError, UnauthorizedError } from '../../../server/errors.js';
import { isLabelName } from '../../../auth/kube-names.js';
import { asCaller, requireRight, withCaller } from '../../caller.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../v1alpha3/kinds/kind-table.js';
import type { ResourceListing } from '../v1alpha3/listing/resource-listing.js';
import { componentNamespaces, componentStatuses } from './components.js';
import { kubectlServer, userKubeconfig } from './kubeconfig.js';
import { IDENTITY_PROVIDER_LABEL } from '../../../auth/users/user-record.js';
import type { KubectlToolboxes } from '../../terminal/kubectl-toolboxes.js';
import {
  listComponents,
  readComponent,
  readUserKubeconfig,
  readUserKubectl,
  readClusterAbnormalWorkloads,
  readClusterQuotas,
  readNamespaceAbnormalWorkloads,
  readNamespaceQuotas,
} from './operations.js';
import { ABNORMAL_STATUSES, COUNTED_RESOURCES, abnormalWorkloads, clusterUsage, namespaceUsage } from './usage.js';

export interface ComponentRouteDeps {
  listing: ResourceListing;
  authorizer: Authorizer;
  /** For a project's ResourceQuotas, read as the caller. */
  client: KubeClient;
  /** The namespace kapi runs in (its components' namespace, as kubesphere-system is KubeSphere's). */
  kapiNamespace: string;
  /** Where kubectl reaches kapi, for users' kubeconfigs: the published address, and the HTTPS listener once up. */
  kubectlEndpoint?: { issuerUrl?: string; listener(): { httpsPort?: number; caPem?: string } };
  /** The users' kubectl pods; undefined: kapi serves no toolbox. */
  toolboxes?: KubectlToolboxes;
}

const LIST_COMPONENTS: ResourceAttributes = { verb: 'list', group: 'resources.kapi.io', resource: 'components' };

const usageRight = (resource: string, namespace?: string): ResourceAttributes => ({
  verb: 'get',
  group: 'resources.kapi.io',
  resource,
  ...(namespace === undefined ? {} : { namespace }),
});

/**
 * The system components of KubeSphere 3.4's cluster overview, from the listing's Service and pod caches; the usage and
 * abnormal workloads of a project's overview (or the cluster's), counted in the listing's caches.
 */
export function componentRoutes(deps: ComponentRouteDeps): Router {
  const router = Router();
  const services = KINDS_BY_RESOURCE.get('services') as KindDefinition;
  const pods = KINDS_BY_RESOURCE.get('pods') as KindDefinition;
  mountOperation(router, '', listComponents, (req, res, next) => {
    const user = req.user;
    if (!user) return next(new UnauthorizedError());
    (async () => {
      const decision = await deps.authorizer.authorize(user, LIST_COMPONENTS);
      if (!decision.allowed) throw forbidden(user.username, LIST_COMPONENTS, decision.reason);
      const components = [];
      for (const namespace of componentNamespaces(deps.kapiNamespace)) {
        const namespaceServices = await deps.listing.cachedWhere(services, () => true, namespace);
        if (namespaceServices.length === 0) continue;
        const namespacePods = await deps.listing.cachedWhere(pods, () => true, namespace);
        components.push(...componentStatuses(namespaceServices, namespacePods));
      }
      res.json(components);
    })().catch(next);
  });

  mountOperation(
    router,
    '',
    readComponent,
    withCaller(async (caller, req, res) => {
      const name = String(req.params.component);
      await requireRight(deps.authorizer, caller, { ...LIST_COMPONENTS, verb: 'get', name });
      // the first system namespace that has it, as KubeSphere looks it up
      for (const namespace of componentNamespaces(deps.kapiNamespace)) {
        const stored = await deps.listing.readCached(services, namespace, name);
        if (!stored) continue;
        const service: unknown = JSON.parse(stored.toString('utf8'));
        const namespacePods = await deps.listing.cachedWhere(pods, () => true, namespace);
        const [status] = componentStatuses([service], namespacePods);
        if (status) return void res.json(status);
      }
      throw new NotFoundError(`component "${name}" not found`, {
        name,
        group: 'resources.kapi.io',
        kind: 'components',
      });
    }),
  );

  const users = KINDS_BY_RESOURCE.get('users') as KindDefinition;
  mountOperation(
    router,
    '',
    readUserKubeconfig,
    withCaller(async (caller, req, res) => {
      const name = String(req.params.user);
      if (name !== caller.username)
        await requireRight(deps.authorizer, caller, {
          verb: 'get',
          group: 'resources.kapi.io',
          resource: 'users',
          subresource: 'kubeconfig',
          name,
        });
      const stored = await deps.listing.readCached(users, undefined, name);
      if (!stored) throw new NotFoundError(`user "${name}" not found`, { name, group: 'iam.kapi.io', kind: 'users' });
      const listener = deps.kubectlEndpoint?.listener() ?? {};
      const server = kubectlServer(deps.kubectlEndpoint?.issuerUrl, req.headers.host, listener.httpsPort);
      if (!server)
        throw new NotFoundError('kapi serves no HTTPS listener, and kubectl sends no token over plain HTTP', {
          name,
          group: 'resources.kapi.io',
          kind: 'users',
        });
      const labels = (JSON.parse(stored.toString('utf8')) as { metadata?: { labels?: Record<string, string> } })
        .metadata?.labels;
      const kubeconfig = userKubeconfig({
        server,
        ...(listener.caPem && { caPem: listener.caPem }),
        username: name,
        // a user of an identity provider may have no password here: the browser signs them in as the console did
        signIn: labels?.[IDENTITY_PROVIDER_LABEL] ? 'browser' : 'password',
      });
      res.type('text/plain').send(kubeconfig);
    }),
  );

  mountOperation(
    router,
    '',
    readUserKubectl,
    withCaller(async (caller, req, res) => {
      const name = String(req.params.user);
      const right: ResourceAttributes = {
        verb: 'get',
        group: 'resources.kapi.io',
        resource: 'users',
        subresource: 'kubectl',
        name,
      };
      // the pod acts with its user's token: nobody else's session may run in it
      if (name !== caller.username) throw forbidden(caller.username, right, 'a kubectl pod is its own user’s only');
      await requireRight(deps.authorizer, caller, right);
      if (!deps.toolboxes)
        throw new NotFoundError('kapi serves no kubectl toolbox (--kubectl-image)', {
          name,
          group: 'resources.kapi.io',
          kind: 'users',
        });
      const aborted = new AbortController();
      res.on('close', () => aborted.abort());
      res.json(await deps.toolboxes.ensure(name, aborted.signal));
    }),
  );

  // each kind's cache (started on its first use) is waited for side by side
  const countsOf = async (namespace: string | undefined, kinds: readonly (readonly [string, string])[]) =>
    new Map(
      await Promise.all(
        kinds.map(
          async ([key, resource]) =>
            [
              key,
              await deps.listing.cachedCount(KINDS_BY_RESOURCE.get(resource) as KindDefinition, namespace),
            ] as const,
        ),
      ),
    );
  const abnormalIn = async (namespace: string | undefined) =>
    new Map(
      await Promise.all(
        ABNORMAL_STATUSES.map(
          async ([resource, statuses]) =>
            [
              resource,
              await deps.listing.cachedCount(KINDS_BY_RESOURCE.get(resource) as KindDefinition, namespace, statuses),
            ] as const,
        ),
      ),
    );
  /** The path's project: a DNS label, or a 400 (`..` or `.` would change the path read as the caller). */
  const projectOf = (req: { params: Record<string, unknown> }): string => {
    const namespace = String(req.params['namespace']);
    if (!isLabelName(namespace)) throw new BadRequestError(`namespace "${namespace.slice(0, 63)}" is not a DNS label`);
    return namespace;
  };

  mountOperation(
    router,
    '',
    readClusterQuotas,
    withCaller(async (caller, _req, res) => {
      await requireRight(deps.authorizer, caller, usageRight('quotas'));
      res.json(clusterUsage(await countsOf(undefined, COUNTED_RESOURCES)));
    }),
  );
  mountOperation(
    router,
    '',
    readNamespaceQuotas,
    withCaller(async (caller, req, res) => {
      const namespace = projectOf(req);
      await requireRight(deps.authorizer, caller, usageRight('quotas', namespace));
      const quotas = await asCaller(
        deps.client,
        caller,
        { path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/resourcequotas` },
        { name: namespace, group: '', kind: 'resourcequotas' },
      );
      const items = Array.isArray(quotas?.items) ? quotas.items : [];
      res.json(namespaceUsage(namespace, items, await countsOf(namespace, COUNTED_RESOURCES)));
    }),
  );
  mountOperation(
    router,
    '',
    readClusterAbnormalWorkloads,
    withCaller(async (caller, _req, res) => {
      await requireRight(deps.authorizer, caller, usageRight('abnormalworkloads'));
      res.json(abnormalWorkloads('', await abnormalIn(undefined)));
    }),
  );
  mountOperation(
    router,
    '',
    readNamespaceAbnormalWorkloads,
    withCaller(async (caller, req, res) => {
      const namespace = projectOf(req);
      await requireRight(deps.authorizer, caller, usageRight('abnormalworkloads', namespace));
      res.json(abnormalWorkloads(namespace, await abnormalIn(namespace)));
    }),
  );
  return router;
}
