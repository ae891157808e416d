/**
 * An endpoint as the API answers it (routes.ts, cursor-routes.ts): its settings flat, the sentence
 * saying which setting finds its records, and its bookmark and last successful run (read-only).
 */
import { getIntegration } from '../integrations/store.js';
import type { Db } from '../storage/db.js';
import { NO_BOOKMARK, type EndpointBookmark } from './cursor-values.js';
import { recordsFoundBy } from './page-records.js';
import { answered, type EndpointAnswer } from './route-schemas.js';
import { enginePagination } from './runtime-forms.js';
import { endpointViewOf, type EndpointSettings } from './settings.js';
import { getBookmark } from './store.js';

export const answerOf = (endpoint: EndpointSettings, recordsPath: string | undefined, bookmark: EndpointBookmark): EndpointAnswer => ({
  ...answered(endpointViewOf(endpoint)),
  ...bookmark,
  recordsFoundBy: recordsFoundBy(enginePagination(endpoint.pagination).responseDataPath, recordsPath ?? ''),
});

export async function endpointAnswerOf(db: Db, endpoint: EndpointSettings): Promise<EndpointAnswer> {
  const [integration, bookmark] = await Promise.all([getIntegration(db, endpoint.integrationSortingOrder), getBookmark(db, endpoint.code)]);
  return answerOf(endpoint, integration?.recordsPath, bookmark ?? NO_BOOKMARK);
}
