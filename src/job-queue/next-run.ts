/**
 * An entry's "Next run" as the console shows it: a held entry has no next run (its time stays stored,
 * but nothing runs until it is set Ready), and a running one runs now.
 */
import { html, type Html } from '../console/html.js';
import { time } from '../console/widgets.js';
import type { JobQueueEntry } from './entries.js';

export function nextRun(entry: Pick<JobQueueEntry, 'status' | 'nextRunAt'>): Html | string {
  switch (entry.status) {
    case 'On Hold':
      return html`<span class="hold">On Hold: not until set Ready</span>`;
    case 'In Process':
      return entry.nextRunAt === null ? 'Running now' : time(entry.nextRunAt);
    case 'Ready':
    case 'Error':
      return time(entry.nextRunAt);
    default: {
      const never: never = entry.status;
      return never;
    }
  }
}
