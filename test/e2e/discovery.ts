import { KubeApiError, type KubeClient } from '../../src/kube/client.js';

/** The versions kubectl auth whoami tries, newest first: v1 from Kubernetes 1.28, v1beta1 from 1.27, v1alpha1 in 1.26. */
const SELF_SUBJECT_REVIEW_VERSIONS = ['v1', 'v1beta1', 'v1alpha1'];

/**
 * The authentication.k8s.io version at which the cluster serves SelfSubjectReview, found by discovery; undefined
 * when it serves none (1.26 without its feature gate).
 */
export async function selfSubjectReviewVersion(client: KubeClient): Promise<string | undefined> {
  for (const version of SELF_SUBJECT_REVIEW_VERSIONS) {
    try {
      const list = await client.request<{ resources?: { name: string }[] }>({
        path: `/apis/authentication.k8s.io/${version}`,
      });
      if (list.resources?.some((resource) => resource.name === 'selfsubjectreviews')) return version;
    } catch (err) {
      if (!(err instanceof KubeApiError && err.code === 404)) throw err;
    }
  }
  return undefined;
}

/** The request that asks kube-apiserver who the caller is, at the served version. */
export function selfSubjectReviewRequest(version: string): { path: string; body: string } {
  return {
    path: `/apis/authentication.k8s.io/${version}/selfsubjectreviews`,
    body: JSON.stringify({ apiVersion: `authentication.k8s.io/${version}`, kind: 'SelfSubjectReview' }),
  };
}
