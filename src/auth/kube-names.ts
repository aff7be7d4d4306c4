/** Kubernetes object names (DNS-1123 subdomain): anything else can never name a User or a LoginSession. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isObjectName(value: string): boolean {
  return value.length <= 253 && DNS_SUBDOMAIN.test(value);
}

/** A DNS-1123 label (what a Namespace may be named): an object name of at most 63 characters, without dots. */
export function isLabelName(value: string): boolean {
  return value.length <= 63 && !value.includes('.') && isObjectName(value);
}
