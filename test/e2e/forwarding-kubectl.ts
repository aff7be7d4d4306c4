/**
 * The real kubectl, pointed at kapi by flags only (`--server`, `--certificate-authority`, `--token`): an empty
 * kubeconfig and a private HOME, so the developer's own configuration and caches never take part.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export interface KubectlRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `KAPI_KUBECTL` (set by make), else the binary `make tools` fetches. */
export function kubectlBinary(): string {
  const path = process.env.KAPI_KUBECTL || resolve('.cache/tools/kubectl/kubectl');
  if (!existsSync(path)) throw new Error(`no kubectl at ${path}: run make tools`);
  return path;
}

export class Kubectl {
  private constructor(
    private readonly binary: string,
    private readonly server: string,
    private readonly caFile: string,
    /** HOME, the empty kubeconfig, the discovery cache and manifests written by tests. */
    readonly dir: string,
  ) {}

  static create(server: string, caFile: string | undefined): Kubectl {
    if (!caFile) throw new Error('kapi generated no CA file for its HTTPS listener');
    const binary = kubectlBinary();
    const dir = mkdtempSync(join(tmpdir(), 'kapi-e2e-kubectl-'));
    writeFileSync(join(dir, 'kubeconfig'), '');
    return new Kubectl(binary, server, caFile, dir);
  }

  /** Starts kubectl; the caller reads its output and ends it. */
  spawn(args: string[], token: string): ChildProcessWithoutNullStreams {
    const flags = [
      `--server=${this.server}`,
      `--certificate-authority=${this.caFile}`,
      `--token=${token}`,
      `--cache-dir=${join(this.dir, 'cache')}`,
    ];
    return spawn(this.binary, [...flags, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: this.dir, KUBECONFIG: join(this.dir, 'kubeconfig') },
    });
  }

  /** Runs kubectl to completion; it is killed after `timeoutMs` (the run then has code null). */
  run(args: string[], token: string, options: { stdin?: string; timeoutMs?: number } = {}): Promise<KubectlRun> {
    return new Promise((resolvePromise, reject) => {
      const child = this.spawn(['--request-timeout=10s', ...args], token);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 15_000);
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolvePromise({ code, stdout, stderr });
      });
      child.stdin.end(options.stdin ?? '');
    });
  }

  /** Writes a manifest into the private directory and returns its path. */
  writeManifest(name: string, text: string): string {
    const path = join(this.dir, name);
    writeFileSync(path, text);
    return path;
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
