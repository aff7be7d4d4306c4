import { z } from 'zod';

/** Why `text` is not whole Unix seconds, or undefined when it is. */
export function secondsProblem(text: string): string | undefined {
  if (/^\d{13}$/.test(text)) {
    return `${text} has 13 digits: it looks like milliseconds; whole Unix seconds are required (${text.slice(0, 10)})`;
  }
  if (/^-?\d*\.\d*$/.test(text)) return `"${text}" has a fraction; whole Unix seconds are required`;
  if (/^-\d+$/.test(text)) return `"${text}" is negative; whole Unix seconds are required`;
  if (!/^\d+$/.test(text)) return `"${text}" is not a number; whole Unix seconds are required (e.g. 1700000000)`;
  if (text.length > 11) return `${text} is too large; whole Unix seconds are required (e.g. 1700000000)`;
  return undefined;
}

/**
 * A query parameter of whole Unix seconds only: KubeSphere 3.4 reads seconds and silently misreads milliseconds
 * (SPEC §12), so milliseconds and fractions are a 400.
 */
export const unixSeconds = (meaning: string) =>
  z
    .string()
    .superRefine((text, ctx) => {
      const problem = secondsProblem(text);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .transform(Number)
    .optional()
    .describe(`${meaning}, in whole Unix seconds (e.g. 1700000000). Milliseconds and fractions are a 400.`);
