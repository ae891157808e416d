/**
 * pino, with every place a secret could travel redacted. On a terminal (the output is a TTY) the lines
 * are short and for a person (pino-pretty: time, level, the id of the HTTP request or import, message,
 * the few fields the line has); anywhere else, JSON lines, one per event, for a log collector.
 */
import { isatty } from 'node:tty';
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from './config.js';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'password',
  'secret',
  'token',
  'clientSecret',
  '*.password',
  '*.secret',
  '*.token',
  '*.clientSecret',
];

/** The fields that name what a line belongs to: an HTTP request (`reqId`), a bulk import request, an import run. */
const ID_FIELDS = ['reqId', 'requestId', 'runId'] as const;

/** A line for a person: `[<id>] message`, the id of the HTTP request or import it belongs to first. */
export function humanMessage(log: Record<string, unknown>, messageKey: string): string {
  const id = ID_FIELDS.map((f) => log[f]).find((v) => typeof v === 'string' || typeof v === 'number');
  const message = typeof log[messageKey] === 'string' ? log[messageKey] : '';
  return id === undefined ? message : `[${String(id)}] ${message}`;
}

export interface LogOutput {
  /** Whether the output is a terminal; default: asked of the file descriptor. */
  readonly tty?: boolean;
  /** Where lines go instead of the file descriptor (tests). */
  readonly stream?: NodeJS.WritableStream;
}

/**
 * Where a logger writes: human lines through pino-pretty on a terminal, JSON lines otherwise, both
 * asynchronous (lines written while a write is under way are coalesced into the next one, so a line
 * per request does not cost a system call each, and no line waits for more).
 */
export function logDestination(fd: 1 | 2, output: LogOutput = {}): { readonly human: boolean; readonly stream: DestinationStream } {
  const human = output.tty ?? isatty(fd);
  if (!human) {
    return { human, stream: (output.stream as DestinationStream | undefined) ?? pino.destination({ dest: fd, sync: false }) };
  }
  const stream = pretty({
    destination: output.stream ?? fd,
    sync: false,
    colorize: output.stream === undefined,
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
    // Bound to every line of a thread or process, they say nothing about the line itself.
    ignore: ['pid', 'hostname', 'thread', 'kinds', ...ID_FIELDS].join(','),
    messageFormat: humanMessage,
  });
  return { human, stream };
}

export function createLogger(
  config: Pick<Config, 'logLevel'>,
  bindings: Record<string, unknown> = {},
  fd: 1 | 2 = 1,
  output: LogOutput = {},
): Logger {
  return pino(
    { level: config.logLevel, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { pid: process.pid, ...bindings } },
    logDestination(fd, output).stream,
  );
}

export type { Logger };
