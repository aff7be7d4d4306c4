/**
 * The plugin as kubectl finds it: `kubectl-kapi` on the PATH. Its sources are compiled by tsc (so a test never runs a
 * stale dist/) into .cache/, where node resolves `yaml` from the repository's node_modules, and a wrapper starts it
 * with this Node.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const REPO_ROOT = process.cwd();

/** Compiles the plugin; returns a directory holding an executable `kubectl-kapi`, to put first on the PATH. */
export async function buildPlugin(): Promise<string> {
  const base = path.join(REPO_ROOT, '.cache', 'test-plugin');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(path.join(base, 'build-'));
  const outDir = path.join(dir, 'js');
  await promisify(execFile)(process.execPath, [
    path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--target',
    'es2023',
    '--strict',
    '--skipLibCheck',
    '--types',
    'node',
    '--rootDir',
    path.join(REPO_ROOT, 'src', 'cli', 'kubectl-kapi'),
    '--outDir',
    outDir,
    path.join(REPO_ROOT, 'src', 'cli', 'kubectl-kapi', 'main.ts'),
  ]);
  const binDir = path.join(dir, 'bin');
  mkdirSync(binDir);
  const wrapper = path.join(binDir, 'kubectl-kapi');
  writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${path.join(outDir, 'main.js')}" "$@"\n`);
  chmodSync(wrapper, 0o755);
  return binDir;
}
