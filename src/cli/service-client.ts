/**
 * Talking to a running service over HTTP, for the client commands that live outside client-commands.ts
 * (`ifw runs`): the base URL (--url, IFW_URL, or IFW_HOST:IFW_PORT), the credentials (IFW_TOKEN, or
 * IFW_USER and IFW_PASSWORD), and one call that answers the status and the parsed JSON. A service that
 * cannot be reached is a ConfigError: the command ends with exit code 1 and the reason on stderr.
 */
import { ConfigError, loadConfig } from '../core/config.js';

export const API = '/api/vendor/integrationFramework/v1.0';

export const URL_OPTION = ['--url <url>', 'service base URL (IFW_URL, default http://IFW_HOST:IFW_PORT)'] as const;

export function baseUrl(flag: string | undefined): string {
  if (flag !== undefined) return flag.replace(/\/$/, '');
  if (process.env.IFW_URL) return process.env.IFW_URL.replace(/\/$/, '');
  const config = loadConfig();
  return `http://${config.host}:${config.port}`;
}

function authorization(): Record<string, string> {
  const { IFW_TOKEN: token, IFW_USER: user, IFW_PASSWORD: password } = process.env;
  if (token !== undefined && token !== '') return { authorization: `Bearer ${token}` };
  if (user !== undefined && user !== '') return { authorization: `Basic ${Buffer.from(`${user}:${password ?? ''}`).toString('base64')}` };
  return {};
}

export interface Answer {
  readonly status: number;
  readonly json: unknown;
}

/** `body`, when given, is sent as JSON. */
export async function call(method: string, url: string, body?: unknown): Promise<Answer> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: body === undefined ? authorization() : { ...authorization(), 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    throw new ConfigError(`cannot reach the service at ${new URL(url).origin} (${cause}); is it running? (--url or IFW_URL)`);
  }
  const text = await res.text();
  try {
    return { status: res.status, json: JSON.parse(text) as unknown };
  } catch {
    return { status: res.status, json: text };
  }
}

export const isSuccess = (answer: Answer): boolean => answer.status >= 200 && answer.status <= 299;

/** The service's error as a line: `404 notFound: No import run …`. */
export function errorLine(answer: Answer): string {
  const error = (answer.json as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (error === undefined) return `the service answered ${answer.status}`;
  return `${answer.status} ${String(error.code)}: ${String(error.message)}`;
}
