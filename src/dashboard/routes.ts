/** The alarms in the API: entity set `alarms`, read-only, what the dashboard shows (alarms.ts). */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { notFound } from '../core/errors.js';
import { entitySet } from '../http/entity-set.js';
import type { RoutePlugin } from '../http/server.js';
import { ErrorSchema, KeyParams, literalUnion } from '../http/schemas.js';
import type { Db } from '../storage/db.js';
import { ALARM_KINDS, ALARM_SEVERITIES, currentAlarms, type AlarmSettings } from './alarms.js';

export interface AlarmRouteDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly settings: AlarmSettings;
}

const alarms = entitySet({
  name: 'alarms',
  key: 'alarmId',
  keyType: 'string',
  noun: 'alarm',
  item: Type.Object({
    alarmId: Type.String({ description: 'Stable while the cause lasts: the kind, with the entry id or endpoint code it is about' }),
    kind: literalUnion(ALARM_KINDS),
    severity: literalUnion(ALARM_SEVERITIES, { description: 'critical: nothing is processed; warning: something needs a look' }),
    symptom: Type.String(),
    cause: Type.String(),
    remedy: Type.String({ description: 'What to do' }),
    since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Since when the cause is known to hold' }),
  }),
});

export function alarmRoutes(deps: AlarmRouteDeps): RoutePlugin {
  const { db, clock, settings } = deps;
  const tags = ['Alarms'];
  const read = alarms.config('read');
  return (app) => {
    app.get(
      alarms.path,
      {
        config: read,
        schema: {
          summary: 'List the alarms that hold now (an alarm disappears when its cause is gone)',
          tags,
          response: { 200: alarms.List },
        },
      },
      async () => alarms.list(await currentAlarms(db, clock(), settings)),
    );
    app.get(
      alarms.itemPath,
      {
        config: read,
        schema: { summary: 'Read an alarm that holds now', tags, params: KeyParams, response: { 200: alarms.Entity, 404: ErrorSchema } },
      },
      async (request) => {
        const id = alarms.key(request.params.key);
        const found = (await currentAlarms(db, clock(), settings)).find((a) => a.alarmId === id);
        if (found === undefined) throw notFound(`No alarm '${id}': its cause is gone, or it never held.`);
        return alarms.entity(found);
      },
    );
  };
}
