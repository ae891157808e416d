/**
 * Liveness (the process answers), readiness (the database answers and this process's job queue runs;
 * on PostgreSQL also whether wake-ups arrive), and the queue check (`/health/queue`): whether requests
 * are being processed by any process, 503 while the "job queue processor not running" alarm holds.
 */
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Db } from '../storage/db.js';
import type { RoutePlugin } from './server.js';

export interface HealthDeps {
  readonly db: Db;
  /** undefined when this process runs no workers. */
  readonly queue: { readonly healthy: boolean; readonly listening?: boolean } | undefined;
  /** The "job queue processor not running" alarm's words while it holds (dashboard/alarms.ts); undefined otherwise. */
  readonly processorAlarm: () => Promise<string | undefined>;
}

const Check = Type.Object({ status: Type.String(), checks: Type.Optional(Type.Record(Type.String(), Type.String())) });

export function healthRoutes(deps: HealthDeps): RoutePlugin {
  async function readiness() {
    const checks: Record<string, string> = {};
    try {
      await sql`select 1`.execute(deps.db);
      checks.database = 'ok';
    } catch (err) {
      checks.database = `failing: ${(err as Error).message}`;
    }
    checks.jobQueue =
      deps.queue === undefined ? 'not running in this process' : deps.queue.healthy ? 'ok' : 'failing: the worker thread stopped';
    // Degraded, not unready: requests are still processed, only later (at the scheduler tick).
    if (deps.queue?.listening !== undefined) {
      checks.wakeups = deps.queue.listening
        ? 'ok'
        : 'degraded: the LISTEN connection is reconnecting; workers start at their scheduler tick meanwhile';
    }
    const ready = checks.database === 'ok' && (deps.queue === undefined || deps.queue.healthy);
    return { ready, checks };
  }

  return (app) => {
    app.get(
      '/health/live',
      {
        config: { permission: 'public' },
        schema: { summary: 'Liveness: the process answers', tags: ['Health'], response: { 200: Check } },
      },
      () => ({
        status: 'ok',
      }),
    );
    const ready = async (_req: unknown, reply: { status(code: number): unknown }) => {
      const { ready: ok, checks } = await readiness();
      reply.status(ok ? 200 : 503);
      return { status: ok ? 'ok' : 'unavailable', checks };
    };
    app.get(
      '/health/ready',
      {
        config: { permission: 'public' },
        schema: {
          summary: 'Readiness: the database answers (503 while it does not)',
          tags: ['Health'],
          response: { 200: Check, 503: Check },
        },
      },
      ready,
    );
    app.get(
      '/health/queue',
      {
        config: { permission: 'public' },
        schema: {
          summary: 'Queue: requests are being processed somewhere (503 while Pending requests wait and no live worker runs bulk imports)',
          description:
            'About the whole deployment, not this process: 503 while a Pending request is older than IFW_PENDING_ALARM_SECONDS and no ' +
            'process that runs bulk import workers has written a heartbeat within IFW_WORKER_DEAD_SECONDS. For monitors; a load ' +
            'balancer keeps routing API calls by /health/ready.',
          tags: ['Health'],
          response: { 200: Check, 503: Check },
        },
      },
      async (_req, reply) => {
        let processor: string;
        try {
          processor = (await deps.processorAlarm()) ?? 'ok';
        } catch (err) {
          processor = `unknown: the database does not answer: ${(err as Error).message}`;
        }
        const ok = processor === 'ok';
        reply.status(ok ? 200 : 503);
        return { status: ok ? 'ok' : 'unavailable', checks: { processor } };
      },
    );
    app.get(
      '/health',
      {
        config: { permission: 'public' },
        schema: { summary: 'Readiness, as /health/ready', tags: ['Health'], response: { 200: Check, 503: Check } },
      },
      ready,
    );
  };
}
