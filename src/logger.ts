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

export function createLogger(config: Pick<Config, 'logLevel'>, bindings: Record<string, unknown> = {}): Logger {
  return pino({ level: config.logLevel, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { pid: process.pid, ...bindings } });
}

export type { Logger };
