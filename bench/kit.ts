import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A real kube-apiserver for the bench: the kit of ../shared/kube (kit.sh; kube-apiserver + Debian's etcd on
 * loopback), made once in its own directory under .cache/ and started and stopped by the bench. Its etcd data stays
 * between runs, so a kit seeded once (kit-seed.ts) is reused.
 */
export interface Kit {
  readonly version: string;
  readonly dir: string;
  readonly kubeconfig: string;
  readonly url: string;
  /** kube-apiserver's and etcd's pids, for their CPU time (/proc/<pid>/stat). */
  pids(): { 'kube-apiserver': number; etcd: number };
  stop(): Promise<void>;
}

export interface KitOptions {
  version: '1.32' | '1.26';
  /** Where kit.sh lives (kitHome()). */
  home: string;
  /** The kit's directory (its binaries, pki, etcd data). */
  dir: string;
  port: number;
  etcdPort: number;
  /** kube-apiserver flags beyond the kit's (KAS_EXTRA_ARGS). */
  extraArgs?: string;
}

/** The kit's directory: $KUBE_KIT_DIR, else ../shared/kube beside the repository, else /work/shared/kube. */
export function kitHome(root: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = [env.KUBE_KIT_DIR, path.join(root, '..', 'shared', 'kube'), '/work/shared/kube'];
  return candidates.find((dir): dir is string => Boolean(dir) && existsSync(path.join(dir!, 'kit.sh')));
}

/** start.sh runs (90 s of waiting each) while kube-apiserver is alive but not ready yet: up to 10 minutes. */
const START_ATTEMPTS = 7;

function running(pid: (name: string) => number, name: string): boolean {
  try {
    process.kill(pid(name), 0);
    return true;
  } catch {
    return false;
  }
}

function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function shell(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  try {
    const { stdout, stderr } = await run(command, args, {
      env: { ...process.env, ...env },
      maxBuffer: 16 * 1024 * 1024,
    });
    return `${stdout}${stderr}`;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${path.basename(command)} failed: ${(failed.stderr || failed.stdout || failed.message).trim()}`, {
      cause: error,
    });
  }
}

/**
 * Makes the kit (kit.sh changes nothing that is already right), stops a kit of ours left running by an interrupted
 * run, refuses ports another process holds (never sharing another person's kit), and starts it.
 */
export async function startKit(options: KitOptions): Promise<Kit> {
  const { dir } = options;
  await shell(path.join(options.home, 'kit.sh'), [options.version, dir, String(options.port)], {
    ETCD_PORT: String(options.etcdPort),
  });
  await shell(path.join(dir, 'stop.sh'), []);
  const busy: number[] = [];
  for (const port of [options.port, options.etcdPort, options.etcdPort + 1]) if (await portInUse(port)) busy.push(port);
  if (busy.length) {
    throw new Error(
      `port ${busy.join(', ')} is in use by another process: give the kit others (BENCH_KIT_PORT, BENCH_KIT_ETCD_PORT)`,
    );
  }
  const stop = async () => {
    await shell(path.join(dir, 'stop.sh'), []);
  };
  const pid = (name: string) => Number(readFileSync(path.join(dir, 'run', `${name}.pid`), 'utf8').trim());
  // start.sh waits 90 s for /readyz; a kit holding 150,000 pods can take longer on a busy machine (kube-apiserver
  // fills its watch cache first). While kube-apiserver runs, start.sh is asked again: it leaves running processes
  // alone and waits once more.
  for (let attempt = 1; ; attempt++) {
    try {
      await shell(path.join(dir, 'start.sh'), [], { KAS_EXTRA_ARGS: options.extraArgs ?? '' });
      break;
    } catch (error) {
      if (attempt < START_ATTEMPTS && running(pid, 'kube-apiserver') && running(pid, 'etcd')) continue;
      await stop().catch(() => undefined);
      throw error;
    }
  }
  return {
    version: options.version,
    dir,
    kubeconfig: path.join(dir, 'kubeconfig'),
    url: `https://127.0.0.1:${options.port}`,
    pids: () => ({ 'kube-apiserver': pid('kube-apiserver'), etcd: pid('etcd') }),
    stop,
  };
}
