import { randomUUID } from 'node:crypto';
import https from 'node:https';
import type { SandboxUser } from './identity.js';
import type { ResourceType } from './resource-types.js';
import { StatusError } from './status.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/**
 * Validating admission webhooks, as far as the sandbox has them: the ValidatingWebhookConfigurations stored are called
 * for the creations they match (rules by group, resource and operation, `namespaceSelector`), over HTTPS to their
 * `clientConfig.url` trusting `caBundle`, with an `admission.k8s.io/v1` AdmissionReview; a refusal and a failed call
 * (by `failurePolicy`) answer as kube-apiserver does. Not had: updates and deletions (CREATE only), `service`
 * references (the sandbox has no cluster network: such a call fails), objectSelector, matchConditions, mutating
 * webhooks, and the creations the sandbox's own controllers make (they are not requests).
 */
export interface WebhookSources {
  /** The stored configurations, parsed. */
  configurations(): Raw[];
  /** A namespace's labels; undefined when it does not exist. */
  namespaceLabels(name: string): Record<string, string> | undefined;
}

export interface AdmittedCreation {
  type: ResourceType;
  version: string;
  namespace: string;
  object: Raw;
  user: SandboxUser;
  dryRun: boolean;
}

const DEFAULT_TIMEOUT_SECONDS = 10;

/** An answer larger than this is not read (kube-apiserver's limit on a webhook's answer is 3 MiB too). */
const MAX_ANSWER_BYTES = 3 * 1024 * 1024;

export class SandboxWebhooks {
  constructor(private readonly sources: WebhookSources) {}

  /** Whether any stored webhook asks for this operation on this type (else no object is prepared for one). */
  anyFor(type: ResourceType, operation: 'CREATE'): boolean {
    const has = (list: unknown, value: string) => Array.isArray(list) && (list.includes('*') || list.includes(value));
    return this.sources
      .configurations()
      .some((configuration) =>
        (Array.isArray(configuration?.webhooks) ? configuration.webhooks : []).some((webhook: Raw) =>
          (Array.isArray(webhook?.rules) ? webhook.rules : []).some(
            (rule: Raw) => has(rule?.operations, operation) && has(rule?.resources, type.resource),
          ),
        ),
      );
  }

  /** Throws kube-apiserver's Status when a webhook refuses the creation, or cannot be called and fails closed. */
  async admitCreate(creation: AdmittedCreation): Promise<void> {
    for (const configuration of this.sources.configurations()) {
      for (const webhook of Array.isArray(configuration?.webhooks) ? configuration.webhooks : []) {
        if (!matches(webhook, creation, this.sources)) continue;
        await this.call(webhook, creation);
      }
    }
  }

  private async call(webhook: Raw, creation: AdmittedCreation): Promise<void> {
    const name = String(webhook?.name ?? '');
    const failClosed = webhook?.failurePolicy !== 'Ignore';
    // a webhook with side effects is not called for a dry run: the request is refused (as kube-apiserver does)
    if (creation.dryRun && webhook?.sideEffects !== 'None' && webhook?.sideEffects !== 'NoneOnDryRun')
      throw new StatusError(400, 'BadRequest', `admission webhook "${name}" does not support dry run`);
    const { type } = creation;
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: randomUUID(),
        kind: { group: type.group, version: creation.version, kind: type.kind },
        resource: { group: type.group, version: creation.version, resource: type.resource },
        requestKind: { group: type.group, version: creation.version, kind: type.kind },
        requestResource: { group: type.group, version: creation.version, resource: type.resource },
        name: creation.object?.metadata?.name ?? '',
        namespace: creation.namespace,
        operation: 'CREATE',
        userInfo: { username: creation.user.username, groups: creation.user.groups },
        object:
          type.namespaced && creation.object && typeof creation.object === 'object'
            ? { ...creation.object, metadata: { ...creation.object.metadata, namespace: creation.namespace } }
            : creation.object,
        oldObject: null,
        dryRun: creation.dryRun,
        options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
      },
    };
    let answer: Raw;
    try {
      answer = await post(webhook?.clientConfig, review, Number(webhook?.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS));
    } catch (err) {
      if (!failClosed) return;
      throw new StatusError(
        500,
        'InternalError',
        `Internal error occurred: failed calling webhook "${name}": ${(err as Error).message}`,
      );
    }
    const response = answer?.response;
    if (response?.uid !== review.request.uid) {
      if (!failClosed) return;
      throw new StatusError(
        500,
        'InternalError',
        `Internal error occurred: failed calling webhook "${name}": expected response.uid="${review.request.uid}", got "${String(response?.uid ?? '')}"`,
      );
    }
    if (response.allowed === true) return;
    const status = response.status ?? {};
    const code = typeof status.code === 'number' && status.code >= 400 ? status.code : 400;
    const reason = typeof status.reason === 'string' ? status.reason : '';
    const denied = `admission webhook "${name}" denied the request`;
    const message =
      typeof status.message === 'string' && status.message !== ''
        ? `${denied}: ${status.message}`
        : reason !== ''
          ? `${denied}: ${reason}`
          : `${denied} without explanation`;
    throw new StatusError(code, reason, message);
  }
}

function matches(webhook: Raw, creation: AdmittedCreation, sources: WebhookSources): boolean {
  const rules: Raw[] = Array.isArray(webhook?.rules) ? webhook.rules : [];
  const { type } = creation;
  const ruleMatches = rules.some((rule) => {
    const has = (list: unknown, value: string) => Array.isArray(list) && (list.includes('*') || list.includes(value));
    const scope = rule?.scope ?? '*';
    const scoped = scope === '*' || (scope === 'Namespaced') === type.namespaced;
    return (
      has(rule?.operations, 'CREATE') &&
      has(rule?.apiGroups, type.group) &&
      has(rule?.apiVersions, creation.version) &&
      has(rule?.resources, type.resource) &&
      scoped
    );
  });
  if (!ruleMatches) return false;
  const selector = webhook?.namespaceSelector;
  if (!selector || !type.namespaced) return true;
  return selectorMatches(selector, sources.namespaceLabels(creation.namespace) ?? {});
}

/** A LabelSelector (matchLabels, matchExpressions with In, NotIn, Exists, DoesNotExist) against labels. */
export function selectorMatches(selector: Raw, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const expression of Array.isArray(selector?.matchExpressions) ? selector.matchExpressions : []) {
    const key = String(expression?.key ?? '');
    const values: string[] = Array.isArray(expression?.values) ? expression.values : [];
    const has = Object.prototype.hasOwnProperty.call(labels, key);
    switch (expression?.operator) {
      case 'In':
        if (!has || !values.includes(labels[key] as string)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[key] as string)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

function post(clientConfig: Raw, review: unknown, timeoutSeconds: number): Promise<Raw> {
  const url = typeof clientConfig?.url === 'string' ? clientConfig.url : undefined;
  if (!url) return Promise.reject(new Error('the sandbox calls webhooks by clientConfig.url only'));
  const ca = typeof clientConfig?.caBundle === 'string' ? Buffer.from(clientConfig.caBundle, 'base64') : undefined;
  const body = JSON.stringify(review);
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      outcome();
    };
    const req = https.request(
      url,
      {
        method: 'POST',
        ...(ca && ca.length > 0 && { ca }),
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) req.destroy(new Error('the answer is larger than 3 MiB'));
          else chunks.push(chunk);
        });
        res.on('end', () =>
          settle(() => {
            if ((res.statusCode ?? 0) !== 200) {
              reject(new Error(`the server responded with status ${res.statusCode ?? 0}`));
              return;
            }
            try {
              resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
            } catch {
              reject(new Error('the answer is not an AdmissionReview'));
            }
          }),
        );
        res.on('error', (err) => settle(() => reject(new Error(`failed to call webhook: ${err.message}`))));
      },
    );
    // the whole call, not only a silence (a socket timeout restarts with every byte)
    const deadline = setTimeout(() => req.destroy(new Error('context deadline exceeded')), timeoutSeconds * 1000);
    deadline.unref();
    req.on('error', (err) => settle(() => reject(new Error(`failed to call webhook: Post "${url}": ${err.message}`))));
    req.end(body);
  });
}
