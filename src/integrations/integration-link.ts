/**
 * An integration as other pages show it: its name, linked to its card, with its sorting order beside
 * it (the number the API and payloads use). Pages that list many rows read every name once.
 */
import { html, path, type Html } from '../console/html.js';
import type { Db } from '../storage/db.js';

/** Every integration's name by sorting order. */
export async function integrationNames(db: Db): Promise<Map<number, string>> {
  const rows = await db.selectFrom('ifw_integration').select(['sorting_order', 'name']).execute();
  return new Map(rows.map((r) => [r.sorting_order, r.name]));
}

/** `Customers (10)` linked to the card; an integration deleted since shows its number and says so. */
export function integrationLink(sortingOrder: number, name: string | undefined): Html {
  if (name === undefined) return html`${sortingOrder} <span class="muted">(deleted)</span>`;
  return html`<a href="${path(['integrations', sortingOrder])}">${name}</a> <span class="muted">(${sortingOrder})</span>`;
}
