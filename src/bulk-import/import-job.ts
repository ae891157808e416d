/** One claimed request's import, as the processor hands it to its dialect's transaction (sqlite/, postgres/). */
import type { Logger } from 'pino';
import type { importPayloadPg } from '../table-writer/postgres/importer.js';
import type { importPayload } from '../table-writer/sqlite/importer.js';
import type { ImportInput, ImportOutcome } from '../table-writer/model.js';

/** The SQLite importer; tests may substitute one. */
export type ImportFn = typeof importPayload;
/** The PostgreSQL importer; tests may substitute one. */
export type ImportFnPg = typeof importPayloadPg;

export interface ImportJob {
  readonly requestId: string;
  /** The lease token the final status write is fenced by. */
  readonly owner: string;
  readonly leaseMs: number;
  /** When this claim started: with the owner, the claim an abort names (storage/abort-board.ts). */
  readonly startedAt: string;
  /** The import; its payload is the stored text, or '' when it is in `payloadChunks` chunks (read by each dialect's import). */
  readonly input: ImportInput;
  readonly payloadChunks: number;
  /** The length of a chunked payload in characters: about its size in bytes, for estimates. */
  readonly payloadLength: number | null;
  readonly time: () => Date;
  readonly log: Logger;
}

/** Committed: the data and the final status (Completed or Failed) are in; otherwise nothing is. */
export type Imported = { readonly committed: false } | { readonly committed: true; readonly outcome: ImportOutcome };
