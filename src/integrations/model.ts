/**
 * Integrations: how records of a payload become rows of a target table. An integration is identified
 * by its Sorting Order (the `integrationSortingOrder` callers send); its fields say where each value
 * sits in a record, its mappings say which target field receives it.
 */
/**
 * Where an integration's records come from, as the platform labels it: a REST API or a file-based
 * payload. A label only: nothing at run time depends on it (any integration can receive bulk import
 * requests and be fed by a REST API endpoint), hence optional, defaulting to the bulk payload case.
 */
export const INTEGRATION_TYPES = ['restApi', 'file'] as const;
export type IntegrationType = (typeof INTEGRATION_TYPES)[number];
export const DEFAULT_INTEGRATION_TYPE: IntegrationType = 'file';

export const WRITE_MODES = ['insert', 'update', 'upsert'] as const;
export type WriteMode = (typeof WRITE_MODES)[number];

export const ON_RECORD_ERROR = ['fail', 'skip'] as const;
export type OnRecordError = (typeof ON_RECORD_ERROR)[number];

export const COLUMN_TYPES = ['standard', 'constant'] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

export interface Integration {
  readonly sortingOrder: number;
  readonly name: string;
  readonly type: IntegrationType;
  readonly targetTable: string;
  /** Where the record array sits in a payload (dot path or JSONPath); blank means the root is the array. */
  readonly recordsPath: string;
  readonly acceptBulkImportRequests: boolean;
  /** Upper bound for a submitted payload in KB (1 KB = 1024 bytes of UTF-8); null means no per-integration bound. */
  readonly maxPayloadSizeKb: number | null;
  readonly writeMode: WriteMode;
  readonly onRecordError: OnRecordError;
}

export interface IntegrationField {
  readonly integrationSortingOrder: number;
  /** Processing order and key within the integration. */
  readonly fieldNo: number;
  readonly title: string;
  /** Where the value sits in a record: dot path (`address.city`) or JSONPath (`$.address.city`). Standard columns only. */
  readonly sourcePath: string;
  readonly columnType: ColumnType;
  /** The value every record gets; constant columns only. */
  readonly constantValue: string | null;
}

export interface IntegrationMapping {
  readonly integrationSortingOrder: number;
  readonly fieldNo: number;
  /** Name of the target table field that receives the value. */
  readonly targetField: string;
  /** The value must be present in every record (in addition to the target field's own rule). */
  readonly required: boolean;
}

/** Everything the importer needs to run an integration, loaded once per import. */
export interface IntegrationPlan {
  readonly integration: Integration;
  readonly fields: readonly IntegrationField[];
  readonly mappings: readonly IntegrationMapping[];
}
