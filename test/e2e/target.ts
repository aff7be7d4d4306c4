/**
 * The target `startE2E` picks (harness.ts: KUBECONFIG set → the real cluster, else the sandbox), known before it
 * starts, so a case that needs what only the sandbox has can be declared for it alone. On a real cluster such a case
 * is still declared, as skipped, and its name says which missing component it needs: a skip is never silent.
 */
import { describe, it } from '@jest/globals';

export type E2ETarget = 'sandbox' | 'cluster';

export const E2E_TARGET: E2ETarget = process.env.KUBECONFIG ? 'cluster' : 'sandbox';

/** Each suite checks in `beforeAll` that the harness agreed with E2E_TARGET. */
export function assertTarget(actual: E2ETarget): void {
  if (actual !== E2E_TARGET)
    throw new Error(`the e2e harness runs against ${actual}, the suite expected ${E2E_TARGET}`);
}

/** The name a case skipped on a real cluster carries: what it is, and the component a bare cluster lacks. */
export function skippedName(name: string, needs: string): string {
  return `${name} [skipped on a real cluster: needs ${needs}]`;
}

/**
 * `it` on the sandbox; on a real cluster the case is declared skipped, its name ending with what it needs, e.g.
 * `itOnSandbox('a running container (a kubelet with a container runtime)')('then exec relays stdin', …)`.
 */
export function itOnSandbox(needs: string): (name: string, fn: () => Promise<unknown>, timeout?: number) => void {
  return (name, fn, timeout) => {
    if (E2E_TARGET === 'sandbox') it(name, fn, timeout);
    else it.skip(skippedName(name, needs), fn, timeout);
  };
}

/** `describe` on the sandbox; on a real cluster its cases are declared skipped, the block's name saying why. */
export function describeOnSandbox(needs: string): (name: string, fn: () => void) => void {
  return (name, fn) => {
    if (E2E_TARGET === 'sandbox') describe(name, fn);
    else describe.skip(skippedName(name, needs), fn);
  };
}
