/** A raw TCP connection to a service, for what the HTTP server does with connections themselves. */
import net from 'node:net';

/** A raw connection: what it was sent, when it closed, what it received. */
export interface Raw {
  readonly socket: net.Socket;
  readonly closed: Promise<{ afterMs: number; received: string }>;
}

export function connect(base: string): Promise<Raw> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let received = '';
    const socket = net.connect(Number(url.port), url.hostname, () => {
      const closed = new Promise<{ afterMs: number; received: string }>((done) =>
        socket.on('close', () => done({ afterMs: performance.now() - started, received })),
      );
      resolve({ socket, closed });
    });
    socket.on('data', (d: Buffer) => (received += d.toString()));
    socket.on('error', (err) => (socket.connecting ? reject(err) : undefined));
  });
}
