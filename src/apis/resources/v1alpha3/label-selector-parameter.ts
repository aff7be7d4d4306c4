import { z } from 'zod';
import { LabelSelectorError, parseLabelSelector } from '../../../kube/label-selector.js';

/** A Kubernetes label selector (`role=worker,zone in (a,b)`) as a query parameter, parsed; the text is kept for memoizing. */
export const labelSelector = z.string().transform((text, ctx) => {
  try {
    return { text, selector: parseLabelSelector(text) };
  } catch (err) {
    if (!(err instanceof LabelSelectorError)) throw err;
    ctx.issues.push({ code: 'custom', message: err.message, input: text });
    return z.NEVER;
  }
});

/**
 * Items per page. -1 is KubeSphere's "all" (its console asks `limit=-1&page=1` wherever it wants every object), read
 * as an absent limit; any other negative number is a 400.
 */
export const listLimit = z
  .int()
  .min(-1)
  .optional()
  .transform((limit) => (limit === -1 ? undefined : limit))
  .describe(
    'Items per page. Absent or -1 (KubeSphere’s “all”): every item, whatever the page. 0: no items, only totalItems.',
  );

/** KubeSphere 4's name-or-alias search, which its 3.4 console already sends for projects: the same as `name`. */
export const nameAndAlias = z.string().optional().describe('The same as `name` (KubeSphere’s other name for it).');
