import http from 'node:http';
import https from 'node:https';

/**
 * How the bench reaches the backend (the sandbox's HTTPS listener or a real kube-apiserver): the CA to trust and,
 * for a kubeconfig with client certificates, the certificate to present. Plain data, so it crosses into workers.
 */
export interface BackendTrust {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized?: boolean;
  servername?: string;
}

/** Set once per thread (main thread at set-up, each worker from its workerData) before any request is sent. */
let trust: BackendTrust = {};

export function setBackendTrust(given: BackendTrust): void {
  trust = given;
}

export function backendTrust(): BackendTrust {
  return trust;
}

export function isHttps(url: string): boolean {
  return url.startsWith('https:');
}

/** TLS options for a request to `url` (none for plain http: kapi's own listener). */
export function tlsOptions(url: string): https.RequestOptions {
  return isHttps(url) ? { ...trust } : {};
}

/** An agent for `url`'s scheme; https agents carry the backend trust. */
export function agentFor(url: string, options: http.AgentOptions): http.Agent {
  return isHttps(url) ? new https.Agent({ ...options, ...trust }) : new http.Agent(options);
}

/** `http.request` or `https.request` (with the backend trust) by the URL's scheme. */
export function request(
  url: string | URL,
  options: http.RequestOptions,
  onResponse?: (res: http.IncomingMessage) => void,
): http.ClientRequest {
  const text = String(url);
  return isHttps(text)
    ? https.request(url, { ...tlsOptions(text), ...options }, onResponse)
    : http.request(url, options, onResponse);
}
