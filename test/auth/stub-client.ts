import { KubeApiError, type KubeClient, type KubeRequest } from '../../src/kube/client.js';

/** A KubeClient whose answers a test scripts; it records every request. */
export function stubClient(
  answer: (req: KubeRequest) => unknown | Promise<unknown>,
): KubeClient & { requests: KubeRequest[] } {
  const requests: KubeRequest[] = [];
  return {
    requests,
    async request<T>(req: KubeRequest): Promise<T> {
      requests.push(req);
      return (await answer(req)) as T;
    },
  } as unknown as KubeClient & { requests: KubeRequest[] };
}

export const kubeError = (code: number) => new KubeApiError(code, undefined, `HTTP ${code}`);
