/** pino, with every place a secret could travel redacted. */
import pino, { type Logger } from 'pino';
import type { Config } from './config.js';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  '*.password',
  '*.secret',
  '*.token',
  '*.clientSecret',
];

/**
 * Logs go to stdout asynchronously: lines written while a write is under way are coalesced into the
 * next one, so a line per request does not cost a system call each, and no line waits for more.
 */
export function createLogger(config: Pick<Config, 'logLevel'>, bindings: Record<string, unknown> = {}, fd: 1 | 2 = 1): Logger {
  const destination = pino.destination({ dest: fd, sync: false });
  return pino(
    { level: config.logLevel, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { pid: process.pid, ...bindings } },
    destination,
  );
}

export type { Logger };
