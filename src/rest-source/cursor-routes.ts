/**
 * `restApiEndpoints('<code>')/Microsoft.NAV.setCursor` and `…/Microsoft.NAV.resetCursor`: an
 * administrator sets or resets an incremental endpoint's bookmark (cursor-service.ts). Both answer
 * the endpoint, its `cursorValue` changed.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import type { RoutePlugin } from '../http/server.js';
import { ErrorSchema, KeyParams, ODATA_BODY } from '../http/schemas.js';
import type { Db } from '../storage/db.js';
import { resetCursor, setCursor } from './cursor-service.js';
import { endpointAnswerOf } from './endpoint-answer.js';
import { restApiEndpoints as endpoints, tags } from './route-schemas.js';

export interface CursorRouteDeps {
  readonly db: Db;
  readonly clock: Clock;
}

const SetCursorBody = Type.Object(
  {
    value: Type.String({
      description: "The bookmark's new value, as the cursor field's type reads it: a date-time (ISO 8601) or a number, as text",
    }),
  },
  ODATA_BODY,
);

export function cursorRoutes({ db, clock }: CursorRouteDeps): RoutePlugin {
  const responses = { 200: endpoints.Entity, 400: ErrorSchema, 404: ErrorSchema };
  return (app) => {
    app.post(
      endpoints.action('setCursor'),
      {
        config: endpoints.config('configureRest'),
        schema: {
          summary: "Set a REST API endpoint's cursor field bookmark",
          description:
            'The next run sends this value (minus cursorFieldLookback) as {{cursor}}. 400 when the endpoint has no cursorField or the value is not of its cursorFieldType.',
          tags,
          params: KeyParams,
          body: SetCursorBody,
          response: responses,
        },
      },
      async (request) => {
        const endpoint = await setCursor(db, endpoints.key(request.params.key), request.body.value, clock);
        return endpoints.entity(await endpointAnswerOf(db, endpoint));
      },
    );
    app.post(
      endpoints.action('resetCursor'),
      {
        config: endpoints.config('configureRest'),
        schema: {
          summary: "Reset a REST API endpoint's cursor field bookmark",
          description:
            'Clears the bookmark: the next run sends cursorFieldInitialValue as {{cursor}} and imports from there again. 400 when the endpoint has no cursorField.',
          tags,
          params: KeyParams,
          response: responses,
        },
      },
      async (request) => {
        const endpoint = await resetCursor(db, endpoints.key(request.params.key), clock);
        return endpoints.entity(await endpointAnswerOf(db, endpoint));
      },
    );
  };
}
