/**
 * The target `startE2E` picks (harness.ts: KUBECONFIG set → the real cluster, else the sandbox), known before it
 * starts, so a case that needs the sandbox's exec echo endpoint (a real cluster needs a running container) can be
 * declared only there. Each suite checks in `beforeAll` that the harness agreed.
 */
export type E2ETarget = 'sandbox' | 'cluster';

export const E2E_TARGET: E2ETarget = process.env.KUBECONFIG ? 'cluster' : 'sandbox';

export function assertTarget(actual: E2ETarget): void {
  if (actual !== E2E_TARGET)
    throw new Error(`the e2e harness runs against ${actual}, the suite expected ${E2E_TARGET}`);
}
