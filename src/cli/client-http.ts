/**
 * How the client commands reach a running service: its base URL (--url, IFW_URL, or IFW_HOST and
 * IFW_PORT), the credentials (IFW_TOKEN, or IFW_USER and IFW_PASSWORD), one HTTP call whose JSON
 * answer is read whole, and the service's refusal as a line.
 */
import { ConfigError, loadConfig } from '../core/config.js';

export const API = '/api/vendor/integrationFramework/v1.0';

/** The --url option of a client command. */
export const URL_OPTION = ['--url <url>', 'service base URL (IFW_URL, default http://IFW_HOST:IFW_PORT)'] as const;

export function baseUrl(flag: string | undefined): string {
  if (flag !== undefined) return flag.replace(/\/$/, '');
  if (process.env.IFW_URL) return process.env.IFW_URL.replace(/\/$/, '');
  const config = loadConfig();
  return `http://${config.host}:${config.port}`;
}

/** Credentials for client commands: IFW_TOKEN (a bearer token), or IFW_USER and IFW_PASSWORD (Basic). */
export function authorization(): Record<string, string> {
  const { IFW_TOKEN: token, IFW_USER: user, IFW_PASSWORD: password } = process.env;
  if (token !== undefined && token !== '') return { authorization: `Bearer ${token}` };
  if (user !== undefined && user !== '') return { authorization: `Basic ${Buffer.from(`${user}:${password ?? ''}`).toString('base64')}` };
  return {};
}

export interface Answer {
  readonly status: number;
  readonly json: unknown;
}

/** The service could not be reached (no answer at all). */
export class Unreachable extends Error {}

export async function http(method: string, url: string, body?: unknown): Promise<Answer> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { ...authorization(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    throw new Unreachable(`cannot reach the service at ${new URL(url).origin} (${cause}); is it running? (--url or IFW_URL)`);
  }
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, json };
}

/** Unreachable while submitting is a refusal to run the command (exit 1), as before polling began. */
export async function reach(method: string, url: string, body?: unknown): Promise<Answer> {
  try {
    return await http(method, url, body);
  } catch (err) {
    if (err instanceof Unreachable) throw new ConfigError(err.message);
    throw err;
  }
}

export const isSuccess = (answer: Answer): boolean => answer.status >= 200 && answer.status <= 299;

/** The service's error as a line: `404 notFound: No import run …`. */
export function errorLine(answer: Answer): string {
  const error = (answer.json as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (error === undefined) return `the service answered ${answer.status}`;
  return `${answer.status} ${String(error.code)}: ${String(error.message)}`;
}
