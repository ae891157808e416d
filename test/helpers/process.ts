/** Running the built service as a user would: `node bin/ifw.js …` in a child process. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';

export const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/ifw.js');

export function assertBuilt(): void {
  if (!fs.existsSync(path.join(ROOT, 'dist/cli/main.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first (`npm test` does it)');
  }
}

export function runIfw(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly baseUrl: string;
  readonly logs: string[];
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `ifw serve` on an ephemeral port and resolves once it listens. */
export function startServer(env: NodeJS.ProcessEnv, args: string[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    env: { ...process.env, IFW_PORT: '0', IFW_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  createInterface({ input: child.stderr }).on('line', (line) => logs.push(line));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      logs.push(line);
      if (!line.includes('integration service listening')) return;
      const { address } = JSON.parse(line) as { address: string };
      resolve({
        child,
        baseUrl: address,
        logs,
        async stop(signal: NodeJS.Signals = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    });
    void exited.then((code) => reject(new Error(`ifw serve exited with ${code}:\n${logs.join('\n')}`)));
  });
}
