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

/**
 * The environment a child gets: this process's, without any IFW_* setting (a developer's IFW_TOKEN or
 * IFW_ADMIN_PASSWORD must not change what a test sees), plus `env`. An undefined value leaves a variable out.
 */
function childEnv(env: NodeJS.ProcessEnv, defaults: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('IFW_')));
  return { ...inherited, ...defaults, ...env };
}

export interface RunResult {
  /** The exit code; null when the process was killed (by a signal, or after `timeoutMs`). */
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Written to the command's stdin, which is then closed; without it stdin is empty. */
  readonly input?: string;
  /** The command is killed after this long (a command that should have exited but serves). Default 30 s. */
  readonly timeoutMs?: number;
}

export function runIfw(args: string[], env: NodeJS.ProcessEnv, options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: childEnv(env), stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // A command that exits without reading its input closes the pipe under us: that is not an error here.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    // 'close', not 'exit': all of the output has been read by then.
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly baseUrl: string;
  /** Every line of stdout and stderr, in the order read. */
  readonly logs: string[];
  /** The lines of stdout only: the service's log. */
  readonly stdout: string[];
  /** The lines of stderr only: what the service writes for the person who started it. */
  readonly stderr: string[];
  /** The first stderr line matching `pattern`, waiting up to `timeoutMs` for it. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Stops the process and resolves with its exit code once all of its output has been read. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `ifw serve` on an ephemeral port and resolves once it listens. */
export function startServer(env: NodeJS.ProcessEnv, args: string[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    env: childEnv(env, { IFW_PORT: '0', IFW_HOST: '127.0.0.1' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const stdout: string[] = [];
  const stderr: string[] = [];
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const stderrLines = createInterface({ input: child.stderr });
  stderrLines.on('line', (line) => {
    logs.push(line);
    stderr.push(line);
  });

  /** Resolves with the first line matching, as soon as it is read (no polling); fails at the timeout or at the end of stderr. */
  function waitForStderr(pattern: RegExp, timeoutMs = 5_000): Promise<string> {
    const seen = stderr.find((l) => pattern.test(l));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        stderrLines.off('line', onLine);
        child.stderr.off('end', onEnd);
      };
      const fail = () => {
        done();
        reject(new Error(`no stderr line matching ${String(pattern)}:\n${stderr.join('\n')}`));
      };
      const onLine = (line: string) => {
        if (!pattern.test(line)) return;
        done();
        resolve(line);
      };
      const onEnd = () => fail();
      const timer = setTimeout(fail, timeoutMs);
      stderrLines.on('line', onLine);
      if (child.stderr.readableEnded) fail();
      else child.stderr.once('end', onEnd);
    });
  }

  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      logs.push(line);
      stdout.push(line);
      if (!line.includes('integration service listening')) return;
      const { address } = JSON.parse(line) as { address: string };
      resolve({
        child,
        baseUrl: address,
        logs,
        stdout,
        stderr,
        waitForStderr,
        async stop(signal: NodeJS.Signals = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return closed;
        },
      });
    });
    void closed.then((code) => reject(new Error(`ifw serve exited with ${code}:\n${logs.join('\n')}`)));
  });
}

/** `Authorization: Basic …` for a user name and password. */
export const basicAuth = (userName: string, password: string): { authorization: string } => ({
  authorization: `Basic ${Buffer.from(`${userName}:${password}`).toString('base64')}`,
});

export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Every line of stdout and stderr, in the order read. */
  readonly logs: string[];
  /** The lines of stdout only: the worker's JSON log. */
  readonly stdout: string[];
  readonly stderr: string[];
  /** Stops the process and resolves with its exit code (null when killed by a signal) once its output has been read. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves with the exit code once the process has exited and its output has been read. */
  readonly closed: Promise<number | null>;
}

export interface StartWorkerOptions {
  /** The stdout log line that says the worker runs; default: a JSON line whose `msg` says a worker started or is ready. */
  readonly started?: RegExp;
  /** How long to wait for it before killing the process and failing (default 20 s). */
  readonly timeoutMs?: number;
}

/** `msg` of the line `ifw worker` logs once it runs, e.g. "worker started" or "job queue worker ready". */
const WORKER_STARTED = /"msg":"[^"]*\bworkers?\b[^"]*\b(started|ready|running)\b[^"]*"/i;

/**
 * Starts `ifw worker` (job queue workers only, no HTTP) and resolves once it logs that it started. When
 * the command does not exist in this build, or exits early, it rejects with what the command printed,
 * so a test that needs workers fails saying why instead of waiting for requests nobody processes.
 */
export function startWorker(env: NodeJS.ProcessEnv, args: string[] = [], options: StartWorkerOptions = {}): Promise<WorkerProcess> {
  const started = options.started ?? WORKER_STARTED;
  const child = spawn(process.execPath, [BIN, 'worker', ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  const stdout: string[] = [];
  const stderr: string[] = [];
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  createInterface({ input: child.stderr }).on('line', (line) => {
    logs.push(line);
    stderr.push(line);
  });
  const worker: WorkerProcess = {
    child,
    pid: child.pid!,
    logs,
    stdout,
    stderr,
    closed,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return closed;
    },
  };
  return new Promise((resolve, reject) => {
    let ready = false;
    const timer = setTimeout(() => {
      if (ready) return;
      child.kill('SIGKILL');
      reject(
        new Error(
          `ifw worker did not log a line matching ${String(started)} within ${options.timeoutMs ?? 20_000} ms:\n${logs.join('\n')}`,
        ),
      );
    }, options.timeoutMs ?? 20_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      logs.push(line);
      stdout.push(line);
      if (ready || !started.test(line)) return;
      ready = true;
      clearTimeout(timer);
      resolve(worker);
    });
    void closed.then((code) => {
      clearTimeout(timer);
      if (ready) return;
      const unknown = stderr.some((l) => /unknown command 'worker'/.test(l));
      reject(
        new Error(
          unknown
            ? `this build has no \`ifw worker\` command (bin/ifw.js answered "${stderr[0]}"); rebuild (npm run build) once it exists`
            : `ifw worker exited with ${code} before it logged that it started:\n${logs.join('\n')}`,
        ),
      );
    });
  });
}

/** What `stop()` and `child` of a started process give; both ServerProcess and WorkerProcess have them. */
interface Stoppable {
  readonly child: ChildProcess;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Stops every process with SIGTERM and answers their exit codes once all have closed; one that has not
 * stopped after `graceMs` is killed with SIGKILL, so that none is left running after a failure.
 */
export async function stopAll(processes: readonly Stoppable[], graceMs = 10_000): Promise<(number | null)[]> {
  const kill = setTimeout(
    () => processes.forEach((p) => p.child.exitCode === null && p.child.signalCode === null && p.child.kill('SIGKILL')),
    graceMs,
  );
  try {
    return await Promise.all(processes.map((p) => p.stop()));
  } finally {
    clearTimeout(kill);
  }
}

/**
 * Waits until the processes' job queues have drained: `counts` (requests by status) has none Pending
 * or Processing. Polls, since the work happens in other processes; after `timeoutMs` it fails with the
 * counts and `logs()` (the processes' last lines).
 */
export async function waitUntilDrained(
  counts: () => Promise<Record<string, number>>,
  timeoutMs: number,
  logs: () => string,
): Promise<Record<string, number>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = await counts();
    if ((seen.Pending ?? 0) === 0 && (seen.Processing ?? 0) === 0) return seen;
    if (Date.now() > deadline) throw new Error(`not drained after ${timeoutMs} ms: ${JSON.stringify(seen)}\n${logs()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
