/**
 * Where log lines go: on a terminal, short lines for a person (pino-pretty: time, level, the id of the
 * HTTP request or import in front of the message, the line's own fields on the same line); elsewhere
 * JSON lines, as a log collector reads them. Secrets are redacted in both.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, logDestination } from '../../src/core/logger.js';

function collector(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

/** Logs two lines and waits for them to reach the stream. */
async function logged(tty: boolean): Promise<string> {
  const out = collector();
  const logger = createLogger({ logLevel: 'info' }, {}, 1, { tty, stream: out.stream });
  logger.info({ reqId: 'b7c1e0a2-4c1d-4a4e-9a55-0123456789ab', method: 'GET', status: 200, ms: 3 }, 'request');
  logger.warn(
    { requestId: '01936f0e-3c1a-7b6e-9a55-2f0c1d2e3f40', password: 'hunter2-secret', token: { token: 'abc-secret' } },
    'bulk import request failed',
  );
  logger.flush();
  await new Promise((resolve) => setTimeout(resolve, 50));
  return out.text();
}

describe('the log destination', () => {
  it('is pino-pretty on a terminal, JSON elsewhere', () => {
    const out = collector();
    expect(logDestination(1, { tty: true, stream: out.stream }).human).toBe(true);
    expect(logDestination(1, { tty: false, stream: out.stream }).human).toBe(false);
  });

  it('on a terminal: one short line per event, the id first, no JSON braces around the message, secrets redacted', async () => {
    const text = await logged(true);
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: \[b7c1e0a2-4c1d-4a4e-9a55-0123456789ab\] request /);
    expect(lines[0]).toContain('"status":200');
    expect(lines[0]).not.toContain('"pid"');
    expect(lines[1]).toMatch(/ WARN: \[01936f0e-3c1a-7b6e-9a55-2f0c1d2e3f40\] bulk import request failed/);
    expect(text).not.toContain('hunter2-secret');
    expect(text).not.toContain('abc-secret');
    expect(() => JSON.parse(lines[0]!) as unknown).toThrow();
  });

  it('elsewhere: JSON lines with every field, secrets redacted', async () => {
    const text = await logged(false);
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: 30,
      reqId: 'b7c1e0a2-4c1d-4a4e-9a55-0123456789ab',
      msg: 'request',
      status: 200,
      pid: process.pid,
    });
    expect(lines[1]).toMatchObject({ level: 40, requestId: '01936f0e-3c1a-7b6e-9a55-2f0c1d2e3f40', password: '[redacted]' });
    expect(text).not.toContain('hunter2-secret');
    expect(text).not.toContain('abc-secret');
  });
});
