// One process at a time on a file the records keep on disk (the embedded database's data directory,
// the journal): the holder listens on a Unix socket beside it for as long as it holds it. The kernel
// closes the socket when the process dies, however it dies, so a socket file nobody answers on is a
// holder gone — whose pid may meanwhile be another process's, which is why this is not a pid file.
import { unlink } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';

/** The socket answered: a live process holds it. */
export class SocketHeldError extends Error {
  constructor(
    readonly path: string,
    /** The holder's pid, as it answered; undefined when it did not say in time. */
    readonly pid: number | undefined,
  ) {
    super(`${path} is held by another process${pid !== undefined ? ` (pid ${pid})` : ''}`);
    this.name = 'SocketHeldError';
  }
}

/**
 * Holds `path` (a socket) for this process; resolves to its release. A socket that answers is a
 * live holder (this process included) and is refused; one that does not (a relay killed, a machine
 * that restarted) is taken over. Whoever connects is told the holder's pid, then let go.
 */
export async function holdSocket(path: string): Promise<() => Promise<void>> {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.end(String(process.pid));
    });
    try {
      await listen(server, path);
      // The lock alone never keeps the process alive; the release lets it go, the process's end too.
      server.unref();
      return () => new Promise<void>((done) => server.close(() => done()));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      const holder = await askHolder(path);
      if (holder.alive) throw new SocketHeldError(path, holder.pid);
      await unlink(path).catch(() => undefined);
    }
  }
  throw new Error(`could not take ${path}: another process took it at the same moment`);
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(path, () => {
      server.off('error', fail);
      done();
    });
  });
}

/** How long a holder has to say its pid once connected; a connection that is taken is a live holder all the same. */
const HOLDER_ANSWER_MS = 2_000;

/** Whether a process listens on `path` (it is then alive), and the pid it says it has. */
function askHolder(path: string): Promise<{ alive: boolean; pid?: number }> {
  return new Promise((done) => {
    const socket = connect(path);
    let connected = false;
    let refused = false;
    let said = '';
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const pid = Number.parseInt(said, 10);
      done(refused ? { alive: false } : { alive: true, ...(Number.isInteger(pid) && pid > 0 ? { pid } : {}) });
    };
    // A connection neither taken nor refused in time (a holder too busy to accept) is a live holder.
    const timer = setTimeout(finish, HOLDER_ANSWER_MS);
    socket.setEncoding('utf8');
    socket.on('connect', () => (connected = true));
    socket.on('data', (chunk: string) => (said += chunk));
    socket.on('end', finish);
    socket.on('close', finish);
    // Before a connection, ECONNREFUSED: a socket file nobody listens on; ENOENT: it went meanwhile.
    socket.on('error', () => {
      if (!connected) refused = true;
    });
  });
}
