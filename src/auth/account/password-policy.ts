import { MAX_PASSWORD_BYTES, type PasswordPolicy } from '../../config/account-settings.js';

/**
 * What a new password must be, pure: the configured minimum length (in characters), at most 72 bytes (bcrypt checks
 * no more, so a longer password would be checked by its beginning only), no control characters (the native bcrypt
 * reads a password as a C string: a NUL would end it there), and not the user's own name. The answer names the rule,
 * never the password.
 */
export function passwordProblem(password: string, username: string, policy: PasswordPolicy): string | undefined {
  if ([...password].length < policy.minLength) {
    return `must be at least ${policy.minLength} characters (passwordPolicy.minLength)`;
  }
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) {
    return `must be at most ${MAX_PASSWORD_BYTES} bytes in UTF-8 (bcrypt reads no more)`;
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(password)) return 'must not contain control characters';
  if (password.toLowerCase() === username.toLowerCase()) return 'must not be the user name';
  return undefined;
}
