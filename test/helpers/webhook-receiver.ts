/**
 * A webhook receiver on 127.0.0.1 port 0 that verifies every event with the `standardwebhooks` package,
 * as real receivers do, and keeps the verified ones. It can be down (answering 503, or closing the
 * connection without an answer) for a while, and slow.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedEvent {
  readonly id: string;
  readonly type: string;
  readonly body: Record<string, unknown>;
}

export type ReceiverMode = 'up' | 'unavailable' | 'reset';

export interface WebhookReceiver {
  readonly url: string;
  /** Every verified event, in order of arrival (a redelivery appears again). */
  readonly events: ReceivedEvent[];
  /** Requests whose signature did not verify. */
  readonly refused: string[];
  mode: ReceiverMode;
  /** Waits this long before answering (a slow receiver). */
  delayMs: number;
  /** Requests received and not answered yet (a slow receiver holding them). */
  readonly inFlight: () => number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(secret: string): Promise<WebhookReceiver> {
  const verifier = new Webhook(secret);
  let waiting = 0;
  const receiver: Omit<WebhookReceiver, 'url' | 'close'> = { events: [], refused: [], mode: 'up', delayMs: 0, inFlight: () => waiting };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = () => {
        // A sender that went away meanwhile (killed) never learns of an answer: nothing was received.
        if (req.socket.destroyed) return;
        if (receiver.mode === 'reset') return req.socket.destroy();
        if (receiver.mode === 'unavailable') return res.writeHead(503).end('down for maintenance');
        const body = Buffer.concat(chunks).toString('utf8');
        try {
          const event = verifier.verify(body, req.headers as Record<string, string>) as { type: string };
          receiver.events.push({ id: String(req.headers['webhook-id']), type: event.type, body: event });
          res.writeHead(204).end();
        } catch (err) {
          receiver.refused.push(err instanceof Error ? err.message : String(err));
          res.writeHead(400).end('bad signature');
        }
      };
      if (receiver.delayMs > 0) {
        waiting++;
        setTimeout(() => {
          waiting--;
          answer();
        }, receiver.delayMs);
      } else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hooks`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
