// A server program the tests start on a free port of 127.0.0.1 (redis-server, turnserver): spawned,
// waited for until it answers, tried again on another port if the free one was taken in between,
// and stopped (SIGTERM, then SIGKILL) by the test or, at the latest, when the test process exits.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export interface ServerProcessOptions {
  /** The program, for messages ("redis-server"). */
  name: string;
  command: string;
  args(port: number): string[];
  /** A port that is free now; freeTcpPort by default. */
  freePort?: () => Promise<number>;
  /** Whether the server on `port` answers yet. */
  answers(port: number): Promise<boolean>;
  /** What answering means, for the timeout message ("answer PING"). */
  answering: string;
  pollMs: number;
  timeoutMs?: number;
}

export interface ServerProcess {
  port: number;
  stop(): Promise<void>;
}

const ATTEMPTS = 3;
const DEFAULT_TIMEOUT_MS = 10_000;

export async function startServerProcess(options: ServerProcessOptions): Promise<ServerProcess> {
  let lastError: unknown;
  // The free port may be taken between asking for it and the server binding it: try again then.
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const port = await (options.freePort ?? freeTcpPort)();
    const child = spawn(options.command, options.args(port), { stdio: ['ignore', 'ignore', 'pipe'] });
    const stopOnExit = () => child.kill('SIGKILL');
    process.once('exit', stopOnExit);
    try {
      await waitUntilAnswering(port, child, options);
    } catch (error) {
      lastError = error;
      process.off('exit', stopOnExit);
      await stopChild(child);
      continue;
    }
    return {
      port,
      stop: async () => {
        process.off('exit', stopOnExit);
        await stopChild(child);
      },
    };
  }
  throw new Error(`${options.name} did not start: ${lastError instanceof Error ? lastError.message : String(lastError)}`);
}

export function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilAnswering(port: number, child: ChildProcess, options: ServerProcessOptions): Promise<void> {
  let exited = false;
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.once('exit', () => {
    exited = true;
  });
  child.once('error', (error) => {
    exited = true;
    stderr += error.message;
  });
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${options.name} exited: ${stderr.trim() || 'no output'}`);
    if (await options.answers(port)) return;
    await new Promise((resolve) => setTimeout(resolve, options.pollMs));
  }
  throw new Error(`${options.name} on port ${port} did not ${options.answering} within ${timeoutMs} ms`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 3_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
