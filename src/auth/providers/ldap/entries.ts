import type { Entry } from 'ldapts';
import { leftmostValue } from '../../../config/identity-providers/ldap-syntax.js';

/**
 * Values of directory entries as identity needs them, pure. ldapts gives an attribute as a string, a list of strings
 * or (binary) buffers; a buffer that is not UTF-8 text is written in hex, so an id such as a GUID stays stable text.
 */
export function attributeValues(entry: Entry, attribute: string): string[] {
  const key = Object.keys(entry).find((name) => name.toLowerCase() === attribute.toLowerCase());
  if (key === undefined || key === 'dn') return [];
  const raw = entry[key];
  const values = Array.isArray(raw) ? raw : [raw];
  return values.flatMap((value) => {
    if (typeof value === 'string') return value === '' ? [] : [value];
    if (Buffer.isBuffer(value)) return value.length === 0 ? [] : [textOrHex(value)];
    return [];
  });
}

export function firstValue(entry: Entry, attribute: string): string | undefined {
  return attributeValues(entry, attribute)[0];
}

/** Group names from a group search: each group's name attribute (its first value). */
export function groupNamesFromEntries(entries: readonly Entry[], nameAttribute: string): string[] {
  return entries.flatMap((entry) => firstValue(entry, nameAttribute) ?? []);
}

/** Group names from a user's memberOf-style attribute: the leftmost RDN value of each group DN. */
export function memberOfGroupNames(entry: Entry, attribute: string): string[] {
  return attributeValues(entry, attribute).flatMap((dn) => leftmostValue(dn) ?? []);
}

function textOrHex(value: Buffer): string {
  const text = value.toString('utf8');
  return Buffer.from(text, 'utf8').equals(value) && !text.includes('\u0000') ? text : value.toString('hex');
}
