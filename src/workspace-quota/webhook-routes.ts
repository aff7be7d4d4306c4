import type { TLSSocket } from 'node:tls';
import { Router, type NextFunction, type Request, type Response } from 'express';
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
 * The workspace quotas' validating webhook, over TLS only. kube-apiserver calls it without credentials, as every
 * webhook, so anyone who reaches it may send a review: it answers only that review (allowed or not, and why, which
 * names the quota's figures), refuses a pod kube-apiserver would not have sent (amounts that are no quantities of at
 * least zero), and what a made-up review may change is a quota's charged use, which kapi's controller recounts from
 * the pods. So the chart serves it on a listener and a ClusterIP Service of its own. Anything but a pod's creation
 * or resize is allowed untouched. A quota that cannot be read or charged refuses the pod (503 in the review's
 * status): a quota must not be passed by waiting for a fault.
 */
export function quotaWebhookRoutes(admission: WorkspaceQuotaAdmission, logger: Logger): Router {
  const router = Router();
  router.post(QUOTA_WEBHOOK_PATH, (req: Request, res: Response, next: NextFunction) => {
    // kube-apiserver calls webhooks over TLS only: the plain listener does not answer it
    if (!(req.socket as TLSSocket).encrypted) return next();
    jsonBodyOf(REVIEW_LIMIT_BYTES)(req, res, (err?: unknown) => (err ? next(err) : answerReview(req, res)));
  });
  const answerReview = (req: Request, res: Response) => {
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
    const isPod =
      (request.resource?.group ?? '') === '' &&
      request.resource?.resource === 'pods' &&
      typeof request.namespace === 'string' &&
      request.namespace !== '' &&
      request.object &&
      typeof request.object === 'object';
    const isCreation = request.operation === 'CREATE' && !request.subResource;
    // a resize (Kubernetes 1.33 on) charges what the pod takes more
    const isResize =
      request.operation === 'UPDATE' &&
      request.subResource === 'resize' &&
      request.oldObject &&
      typeof request.oldObject === 'object';
    if (!isPod || !(isCreation || isResize)) {
      answer({ allowed: true });
      return;
    }
    admission
      .admit({
        pod: request.object as V1Pod,
        ...(isResize && { oldPod: request.oldObject as V1Pod }),
        namespace: request.namespace,
        dryRun: request.dryRun === true,
      })
      .then((decision) =>
        answer(
          decision.allowed
            ? { allowed: true }
            : {
                allowed: false,
                status: { status: 'Failure', code: decision.code, reason: decision.reason, message: decision.message },
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
  };
  return router;
}
