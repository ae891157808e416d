/** What the HTTP thread and the submission writer thread say to each other. */
export interface NewRequestRow {
  readonly requestId: string;
  readonly integrationSortingOrder: number;
  readonly payload: string;
  readonly submittedAt: string;
  readonly submittedBy: string | null;
}

export interface WriterData {
  readonly file: string;
  readonly busyTimeoutMs: number;
}

export type WriterMessage =
  { readonly type: 'insert'; readonly id: number; readonly rows: readonly NewRequestRow[] } | { readonly type: 'stop' };

export type WriterReply =
  | { readonly type: 'ready' }
  | { readonly type: 'done'; readonly id: number }
  | { readonly type: 'failed'; readonly id: number; readonly message: string; readonly busy: boolean };
