/** What the HTTP thread and the submission writer thread say to each other. */
export interface NewRequestRow {
  readonly requestId: string;
  readonly integrationSortingOrder: number;
  /** The payload text, or '' when it is stored in chunks. */
  readonly payload: string;
  /** How many chunks hold the payload (0: `payload` is it). */
  readonly payloadChunks: number;
  /** The payload's length in characters, when stored in chunks (null: the length of `payload`). */
  readonly payloadLength: number | null;
  readonly submittedAt: string;
  readonly submittedBy: string | null;
}

export interface WriterData {
  readonly file: string;
  readonly busyTimeoutMs: number;
}

export type WriterMessage =
  | { readonly type: 'insert'; readonly id: number; readonly rows: readonly NewRequestRow[] }
  | { readonly type: 'chunk'; readonly id: number; readonly requestId: string; readonly seq: number; readonly data: Uint8Array }
  | { readonly type: 'discard'; readonly id: number; readonly requestId: string }
  | { readonly type: 'stop' };

export type WriterReply =
  | { readonly type: 'ready' }
  | { readonly type: 'done'; readonly id: number }
  | { readonly type: 'failed'; readonly id: number; readonly message: string; readonly busy: boolean };
