/** Kept for suites that import the target from here; it lives in target.ts with the sandbox-only helpers. */
export { assertTarget, E2E_TARGET, type E2ETarget } from './target.js';
