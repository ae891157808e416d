/**
 * Storage schema of the service's own tables (prefixed `ifw_`). Target tables are created at run time
 * from their declarations and are not part of this type. Timestamps are ISO 8601 UTC strings so that
 * they sort as text and read the same on SQLite and PostgreSQL; booleans are 0/1 integers.
 */
import type { Generated } from 'kysely';

export interface TargetTableRow {
  name: string;
  definition: string;
  created_at: string;
  updated_at: string;
}

export interface IntegrationRow {
  sorting_order: number;
  name: string;
  type: string;
  target_table: string;
  records_path: string;
  accept_bulk_import: number;
  max_payload_size_kb: number | null;
  write_mode: string;
  on_record_error: string;
  created_at: string;
  updated_at: string;
}

export interface IntegrationFieldRow {
  integration_sorting_order: number;
  field_no: number;
  title: string;
  source_path: string;
  column_type: string;
  constant_value: string | null;
}

export interface IntegrationMappingRow {
  integration_sorting_order: number;
  field_no: number;
  target_field: string;
  required: number;
}

export interface BulkImportRequestRow {
  request_id: string;
  integration_sorting_order: number;
  payload: string;
  status: string;
  submitted_at: string;
  processed_at: string | null;
  record_count: Generated<number>;
  error_message: Generated<string>;
  inserted_count: Generated<number>;
  updated_count: Generated<number>;
  skipped_count: Generated<number>;
  attempts: Generated<number>;
  lease_owner: string | null;
  lease_expires_at: string | null;
  started_at: string | null;
  ended_at: string | null;
  submitted_by: string | null;
  /** How many rows of ifw_bulk_import_payload_chunk hold the payload; 0: the payload is `payload`. */
  payload_chunks: Generated<number>;
  /** The payload's length in characters; null for requests stored before chunks existed. */
  payload_length: number | null;
  /** The Failed or Cancelled request this one was resubmitted from. */
  resubmitted_from: string | null;
  /** The request this one was resubmitted as. */
  resubmitted_as: string | null;
}

/** A piece of a large payload: its UTF-8 bytes, in order of `seq` (0, 1, …). */
export interface BulkImportPayloadChunkRow {
  request_id: string;
  seq: number;
  data: Uint8Array;
}

/** A submission's Idempotency-Key (src/bulk-import/idempotency.ts). */
export interface IdempotencyKeyRow {
  /** Who submitted: user:<name> or application:<client id>; '' when authentication is off. */
  caller: string;
  idempotency_key: string;
  /** SHA-256 (hex) of the integration's Sorting Order and the payload. */
  fingerprint: string;
  request_id: string;
  submitted_at: string;
  expires_at: string;
}

export interface BulkImportErrorRow {
  request_id: string;
  seq: number;
  record_no: number | null;
  field: string | null;
  value: string | null;
  rule: string;
  message: string;
}

export interface JobQueueEntryRow {
  id: string;
  kind: string;
  description: string;
  status: string;
  recurrence_seconds: number;
  next_run_at: string | null;
  last_run_at: string | null;
  last_ended_at: string | null;
  last_error: Generated<string>;
  lease_owner: string | null;
  lease_expires_at: string | null;
  parameters: Generated<string>;
  created_at: string;
  updated_at: string;
}

/**
 * A process that runs job queue workers (`ifw serve` with workers, `ifw worker`), as it last said in
 * its heartbeat. `lanes` is JSON: per lane what it runs now and when it last claimed work.
 */
export interface WorkerRow {
  worker_id: string;
  host: string;
  pid: number;
  version: string;
  started_at: string;
  heartbeat_at: string;
  /** JSON array of the lanes this process runs (its roles). */
  roles: string;
  concurrency: number;
  /** JSON array of { lane, running, since, lastClaimAt }. */
  lanes: string;
  last_claim_at: string | null;
}

export interface RestConnectionRow {
  code: string;
  base_url: string;
  auth_type: string;
  /** JSON of the non-secret auth settings: username, apiKeyName, apiKeyIn, tokenUrl, clientId, scope. */
  auth_config: string;
  /** Sealed JSON of the secrets (password, token, apiKey, clientSecret); null when there are none. */
  secrets: string | null;
  headers: string;
  query: string;
  timeout_ms: number;
  max_retries: number;
  initial_delay_ms: number;
  created_at: string;
  updated_at: string;
}

export interface RestEndpointRow {
  code: string;
  connection_code: string;
  path: string;
  method: string;
  headers: string;
  query: string;
  body: string | null;
  integration_sorting_order: number;
  /** JSON of the Pagination section as its tagged union (src/rest-source/stored-pagination.ts). */
  pagination: string;
  /** JSON of the settings of the pagination types not in use, kept for a switch back; '{}' when none. */
  pagination_kept: Generated<string>;
  schedule_seconds: number | null;
  /** JSON of the response actions, `[{"status":404,"action":"stop"}]`; '[]' when none (src/rest-source/response-actions.ts). */
  response_actions: Generated<string>;
  /** 1 when a run keeps a cookie jar for the connection's origin, else 0. */
  session_cookies: Generated<number>;
  /** JSON of the incremental settings (src/rest-source/cursor-values.ts), null when the endpoint has no cursor field. */
  incremental: string | null;
  /** The cursor field bookmark: the highest value the committed runs imported (normalised); null: none yet. */
  cursor_value: string | null;
  /** When the bookmark last changed (a run, a set, a reset). */
  cursor_updated_at: string | null;
  /** When the endpoint's last Completed run started: {{lastSuccessfulRun.startedAt}}. */
  last_success_started_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ImportRunRow {
  run_id: string;
  endpoint_code: string;
  integration_sorting_order: number;
  trigger: string;
  status: string;
  queued_at: string;
  started_at: string | null;
  ended_at: string | null;
  duration_ms: number | null;
  pages_fetched: Generated<number>;
  /** Records received from the endpoint (found on its pages), all pages. */
  records_fetched: Generated<number>;
  inserted_count: Generated<number>;
  updated_count: Generated<number>;
  skipped_count: Generated<number>;
  stop_reason: string | null;
  /** Why fetching stopped, as a sentence; '' until it did. */
  stop_detail: Generated<string>;
  /** JSON array of strings. */
  warnings: Generated<string>;
  error_message: Generated<string>;
  lease_owner: string | null;
  lease_expires_at: string | null;
  attempts: Generated<number>;
}

/** A per-record error of a run (migration 017), with the page and the place on it the record came from. */
export interface ImportRunErrorRow {
  run_id: string;
  seq: number;
  record_no: number | null;
  page_no: number | null;
  record_on_page: number | null;
  field: string | null;
  value: string | null;
  rule: string;
  message: string;
}

export interface ImportRunPageRow {
  run_id: string;
  page_no: number;
  /** The URL called, secrets redacted. */
  url: string;
  records_fetched: number;
  /**
   * NULL: staged records live in the staging connection's TEMP table (src/import-runs/postgres/staged-records.ts; SQLite: src/table-writer/sqlite/staged-rows.ts).
   * Runs staged before that change held them here while under way.
   */
  records: string | null;
}

export interface UserRow {
  user_name: string;
  /**
   * Who the user is, whatever their name: a random id given at creation and never reused, so that a
   * user deleted and created again under the same name is someone else (console sessions name it).
   */
  user_id: string;
  /**
   * Changes with every change of password, permission sets or enabled state: a console session holds
   * the stamp of its sign-in and ends when the user's stamp is another.
   */
  security_stamp: string;
  /** argon2id PHC string; never leaves the service. */
  password_hash: string;
  enabled: number;
  /** JSON array of permission set names. */
  permission_sets: string;
  created_at: string;
  updated_at: string;
  password_changed_at: string;
}

export interface ApplicationRow {
  /** The OAuth client id: the token's `azp`, `appid` or `client_id` claim. */
  client_id: string;
  /** The issuer (`iss`) whose tokens name this client; null: registered before issuers were bound (see auth/authenticate.ts). */
  issuer: string | null;
  display_name: string;
  enabled: number;
  /** JSON array of permission set names. */
  permission_sets: string;
  created_at: string;
  updated_at: string;
}

/** A signed-in console session; `token_hash` is the SHA-256 of the cookie's token. */
export interface ConsoleSessionRow {
  token_hash: string;
  /** The user's `user_id`. */
  user_id: string;
  /** The user's `security_stamp` at sign-in. */
  security_stamp: string;
  csrf_token: string;
  created_at: string;
  last_seen_at: string;
  /** The absolute end, whatever the activity. */
  expires_at: string;
}

/** A URL told when a request or run ends (src/webhooks/): of an integration or of a REST endpoint. */
export interface WebhookRow {
  webhook_id: string;
  integration_sorting_order: number | null;
  endpoint_code: string | null;
  url: string;
  description: Generated<string>;
  /** The signing secret (`whsec_…`), sealed like a connection's secrets. */
  secret: string;
  enabled: Generated<number>;
  created_at: string;
  updated_at: string;
}

/** One event for one webhook: the outbox row and its delivery log. */
export interface WebhookDeliveryRow {
  /** The event's `webhook-id`: the same on every attempt and redelivery. */
  delivery_id: string;
  webhook_id: string;
  event_type: string;
  /** `request`, `run` or `test`. */
  subject_kind: string;
  subject_id: string | null;
  payload: string;
  status: string;
  attempts: Generated<number>;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status: number | null;
  last_error: Generated<string>;
  created_at: string;
  delivered_at: string | null;
}

export interface DB {
  ifw_target_table: TargetTableRow;
  ifw_integration: IntegrationRow;
  ifw_integration_field: IntegrationFieldRow;
  ifw_integration_mapping: IntegrationMappingRow;
  ifw_bulk_import_request: BulkImportRequestRow;
  ifw_bulk_import_error: BulkImportErrorRow;
  ifw_bulk_import_payload_chunk: BulkImportPayloadChunkRow;
  ifw_job_queue_entry: JobQueueEntryRow;
  ifw_worker: WorkerRow;
  ifw_rest_connection: RestConnectionRow;
  ifw_rest_endpoint: RestEndpointRow;
  ifw_import_run: ImportRunRow;
  ifw_import_run_page: ImportRunPageRow;
  ifw_import_run_error: ImportRunErrorRow;
  ifw_user: UserRow;
  ifw_application: ApplicationRow;
  ifw_console_session: ConsoleSessionRow;
  ifw_idempotency_key: IdempotencyKeyRow;
  ifw_webhook: WebhookRow;
  ifw_webhook_delivery: WebhookDeliveryRow;
}
