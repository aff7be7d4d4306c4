import { stringify } from 'yaml';
import { guardObjects, type GuardApiVersion } from './policy.js';

/** The chart's copy of the tenant guard (generate.ts writes it; the chart fills in kapi's ServiceAccount). */
export const USERNAME_PLACEHOLDER = '__KAPI_USERNAME__';
export const GUARD_FILES_DIR = 'charts/kapi-apiserver/files/tenant-guard';

export function guardFileText(version: GuardApiVersion): string {
  const { policy, binding } = guardObjects(version, { kapiUsernames: [USERNAME_PLACEHOLDER] });
  const header =
    '# Generated from src/tenant-guard/policy.ts by `make tenant-guard`. Do not edit: change the rules there.\n';
  return `${header}${stringify(policy, { lineWidth: 0 })}---\n${stringify(binding, { lineWidth: 0 })}`;
}
