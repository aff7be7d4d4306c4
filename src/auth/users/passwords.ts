import bcrypt from 'bcrypt';

/**
 * Password checks against the bcrypt hashes in `User.spec.password`. bcrypt's native compare runs on the libuv
 * thread pool, so a login never blocks the event loop.
 */
export interface PasswordVerifier {
  /**
   * `hash` undefined (unknown user, no password set) still costs one comparison and answers false. Rejects with
   * `PasswordChecksBusy` when the checks are saturated.
   */
  verify(password: string, hash: string | undefined): Promise<boolean>;
}

/**
 * Too many password checks are already waiting: the attempt is refused before it is checked. It says nothing about
 * the password, so it is never counted as a failed login (the token endpoint answers 503 temporarily_unavailable).
 */
export class PasswordChecksBusy extends Error {
  constructor(waiting: number) {
    super(`${waiting} password checks are already waiting`);
    this.name = 'PasswordChecksBusy';
  }
}

/**
 * A cost-10 hash of a random string nobody knows, compared against when there is no user, so the answer takes as
 * long as a real check and timing does not reveal whether a user exists.
 */
const DUMMY_HASH = '$2b$10$/py4Let0RLRgwxYqR0RtaO3DPvYpOvTXpGR1fYBRxyuq.n649q2mO';
/** bcrypt reads 72 bytes at most; anything far longer is not a password but an attempt to waste work. */
const MAX_PASSWORD_BYTES = 1024;
const BCRYPT_HASH = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/;

/** The rules every check follows, whichever thread runs bcrypt. */
export function passwordVerifier(compare: (password: string, hash: string) => Promise<boolean>): PasswordVerifier {
  return {
    async verify(password, hash) {
      const usable = hash !== undefined && BCRYPT_HASH.test(hash);
      const oversized = Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES;
      const matches = await compare(oversized ? '' : password, usable ? normalizeBcryptHash(hash) : DUMMY_HASH);
      return usable && !oversized && matches;
    },
  };
}

/** bcrypt on libuv's thread pool, at normal priority (tests; the server uses a PasswordCheckPool). */
export const bcryptPasswords: PasswordVerifier = passwordVerifier((password, hash) => bcrypt.compare(password, hash));

/**
 * `$2y$` (PHP's name for the fixed bcrypt, as KubeSphere and htpasswd write it) is the same algorithm as `$2b$`,
 * but the native library only knows `$2a$`/`$2b$`, so the prefix is rewritten before comparing.
 */
export function normalizeBcryptHash(hash: string): string {
  return hash.startsWith('$2y$') ? `$2b$${hash.slice(4)}` : hash;
}
