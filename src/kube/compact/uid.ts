/**
 * Object uids (UUIDs, 36 characters) packed as their 16 bytes into a shared byte array: 16 bytes per object instead
 * of a 36-character string on the heap. Anything that is not a lower-case or upper-case UUID is left to the caller.
 */
const HEX = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const DIGITS = '0123456789abcdef';

function nibble(code: number): number {
  // '0'-'9', 'a'-'f', 'A'-'F' (checked by HEX before)
  return code <= 57 ? code - 48 : (code | 32) - 87;
}

/** Writes the uid's 16 bytes at `at`; false (nothing written) when it is no UUID or is not lower-case. */
export function packUid(uid: string, into: Uint8Array, at: number): boolean {
  if (uid.length !== 36 || !HEX.test(uid) || uid !== uid.toLowerCase()) return false;
  let byte = 0;
  for (let i = 0; i < 36; i++) {
    if (i === 8 || i === 13 || i === 18 || i === 23) continue;
    const high = nibble(uid.charCodeAt(i++));
    into[at + byte++] = (high << 4) | nibble(uid.charCodeAt(i));
  }
  return true;
}

export function unpackUid(from: Uint8Array, at: number): string {
  let out = '';
  for (let byte = 0; byte < 16; byte++) {
    if (byte === 4 || byte === 6 || byte === 8 || byte === 10) out += '-';
    const value = from[at + byte] as number;
    out += DIGITS[value >> 4]! + DIGITS[value & 15]!;
  }
  return out;
}

/** Whether the packed uid at `at` is `uid` (compared without unpacking). */
export function sameUid(from: Uint8Array, at: number, uid: string): boolean {
  if (uid.length !== 36 || !HEX.test(uid)) return false;
  let byte = 0;
  for (let i = 0; i < 36; i++) {
    if (i === 8 || i === 13 || i === 18 || i === 23) continue;
    const high = nibble(uid.charCodeAt(i++));
    if (from[at + byte++] !== ((high << 4) | nibble(uid.charCodeAt(i)))) return false;
  }
  // upper-case text never equals the stored (lower-case) uid, as a string comparison would say
  return uid === uid.toLowerCase();
}
