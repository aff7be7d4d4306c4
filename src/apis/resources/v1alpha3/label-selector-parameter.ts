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
