/**
 * What a caller may do: the closed list of permissions routes declare (`config.permission`, enforced
 * by http/permissions.ts) and permission sets grant (permission-sets.ts).
 */
export const PERMISSIONS = [
  /** Health checks, the OpenAPI document and its UI. */
  'public',
  /** Submit, poll, list, cancel and reset bulk import requests. */
  'bulkImport',
  /** Read integrations, target tables and import results. */
  'read',
  /** Create and change target tables, integrations, fields and mappings. */
  'configure',
  /**
   * Create, change and delete REST API connections: their base URL, authentication and stored secrets,
   * that is where credentials are sent. Also test a connection that is not saved.
   */
  'configureConnections',
  /** Create and change REST API endpoints (and their pagination) on existing connections; test saved connections, preview endpoints. */
  'configureRest',
  /** Start imports from REST API endpoints. */
  'runImports',
  /** Control job queue entries (Ready / On Hold, interval). */
  'jobQueue',
  /** Administer users and applications; see the workers list. */
  'administer',
  /** Scrape the Prometheus metrics at `/metrics` (nothing else: the permission for a monitoring system's credentials). */
  'metrics',
] as const;
export type Permission = (typeof PERMISSIONS)[number];
