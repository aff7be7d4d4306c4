import { Router, type Request, type Response } from 'express';
import type { V1Pod } from '@kubernetes/client-node';
import { jsonBodyOf } from '../auth/account/account-routes.js';
import { describeError } from '../kube/cache-health.js';
import type { Logger } from '../observability/logger.js';
import type { WorkspaceQuotaAdmission } from './admission.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/** Where kube-apiserver sends pod creations for the workspace quotas (KubeSphere: /validate-quota-kubesphere-io-v1alpha2). */
export const QUOTA_WEBHOOK_PATH = '/validate-quota-kapi-io-v1alpha2';

/** kube-apiserver's request bodies are at most 3 MiB; a review carries the object and, on update, the old one. */
const REVIEW_LIMIT_BYTES = 8 * 1024 * 1024;

/**
 * The workspace quotas' validating webhook. kube-apiserver calls it without credentials, as every webhook, so it
 * answers only what a review asks (allowed or not, and why); what it may change is the quota's charged use, which
 * kapi's controller recounts from the pods. Anything but a pod's creation is allowed untouched. A quota that cannot be
 * read or charged refuses the pod (503 in the review's status): a quota must not be passed by waiting for a fault.
 */
export function quotaWebhookRoutes(admission: WorkspaceQuotaAdmission, logger: Logger): Router {
  const router = Router();
  router.post(QUOTA_WEBHOOK_PATH, jsonBodyOf(REVIEW_LIMIT_BYTES), (req: Request, res: Response) => {
    const review: Raw = req.body;
    const request: Raw = review?.request;
    const apiVersion = review?.apiVersion === 'admission.k8s.io/v1beta1' ? review.apiVersion : 'admission.k8s.io/v1';
    if (review?.kind !== 'AdmissionReview' || typeof request?.uid !== 'string') {
      res.status(400).json({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'the body is not an AdmissionReview with a request',
        reason: 'BadRequest',
        code: 400,
      });
      return;
    }
    const answer = (response: Record<string, unknown>) =>
      res.json({ apiVersion, kind: 'AdmissionReview', response: { uid: request.uid, ...response } });
    const isPodCreation =
      request.operation === 'CREATE' &&
      !request.subResource &&
      (request.resource?.group ?? '') === '' &&
      request.resource?.resource === 'pods' &&
      typeof request.namespace === 'string' &&
      request.namespace !== '' &&
      request.object &&
      typeof request.object === 'object';
    if (!isPodCreation) {
      answer({ allowed: true });
      return;
    }
    admission
      .admit(request.object as V1Pod, request.namespace, request.dryRun === true)
      .then((decision) =>
        answer(
          decision.allowed
            ? { allowed: true }
            : {
                allowed: false,
                status: { status: 'Failure', code: 403, reason: 'Forbidden', message: decision.message },
              },
        ),
      )
      .catch((err: unknown) => {
        logger.warn('a workspace quota could not be checked; the pod is refused', {
          namespace: request.namespace,
          error: describeError(err),
        });
        answer({
          allowed: false,
          status: {
            status: 'Failure',
            code: 503,
            reason: 'ServiceUnavailable',
            message: 'the workspace quota could not be checked; try again',
          },
        });
      });
  });
  return router;
}
