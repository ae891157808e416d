/**
 * Target tables: the tables imports write into. A declaration names typed fields, a primary key,
 * required fields, length limits, option values and relations to another table's key; the service
 * creates it as a real SQL table (same name, one column per field) that other programs can read.
 */
export const FIELD_TYPES = ['text', 'code', 'integer', 'decimal', 'boolean', 'date', 'datetime', 'option', 'guid'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export interface FieldRelation {
  /** The related target table. */
  readonly table: string;
  /** The related table's key field (its single-field primary key). */
  readonly field: string;
}

export interface TargetField {
  readonly name: string;
  readonly type: FieldType;
  /** Maximum length in characters; text and code only (defaults: text 250, code 20). */
  readonly maxLength?: number;
  /** A value must be present (primary key fields are always required). */
  readonly required?: boolean;
  /** Allowed values; option only. */
  readonly options?: readonly string[];
  readonly relation?: FieldRelation;
}

export interface TargetTable {
  readonly name: string;
  readonly fields: readonly TargetField[];
  /** Field names forming the primary key, in order. */
  readonly primaryKey: readonly string[];
}

export const DEFAULT_MAX_LENGTH: Readonly<Record<'text' | 'code', number>> = { text: 250, code: 20 };

export function fieldMaxLength(field: TargetField): number | undefined {
  if (field.type === 'text' || field.type === 'code') return field.maxLength ?? DEFAULT_MAX_LENGTH[field.type];
  return undefined;
}

export function isFieldRequired(table: TargetTable, field: TargetField): boolean {
  return field.required === true || table.primaryKey.includes(field.name);
}
