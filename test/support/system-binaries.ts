import { existsSync } from 'node:fs';

/**
 * Debian binaries some suites run for real (`make system-deps` installs them; CI runs it first). A missing one is
 * a failure that says how to get it, never a skipped test.
 */
export function systemBinary(name: 'chromium' | 'prometheus' | 'promtool' | 'prometheus-node-exporter'): string {
  const override = process.env[`KAPI_${name.toUpperCase().replaceAll('-', '_')}`];
  const path = override ?? `/usr/bin/${name}`;
  if (!existsSync(path)) {
    throw new Error(
      `${path} is missing: run \`make system-deps\` (apt-get install chromium prometheus prometheus-node-exporter) or set KAPI_${name.toUpperCase().replaceAll('-', '_')}`,
    );
  }
  return path;
}
