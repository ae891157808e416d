/**
 * Every kind of job queue entry the service runs, in one list. Adding a kind means adding it here
 * (its handler lives in its feature, as bulkImportProcessor in bulk-import/jobs.ts does) and seeding
 * its entry in a migration, if it has a standing one. The lanes follow from the list.
 */
import type { Config } from '../core/config.js';
import { bulkImportProcessor, retentionCleanup, type BulkImportProcessorOptions } from '../bulk-import/jobs.js';
import { endpointImport, importRunProcessor, runRetention } from '../import-runs/jobs.js';
import { defaultImportSources, type ImportSources } from '../import-runs/sources.js';
import type { JobKind } from '../job-queue/jobs.js';
import { createSecretBox, type SecretBox } from '../rest-source/secrets.js';
import { DEFAULT_OUTBOUND_POLICY } from '../rest-source/outbound-policy.js';
import { webhookDelivery } from '../webhooks/jobs.js';

export interface JobOptions extends BulkImportProcessorOptions {
  /** Endpoints, connections and the page fetch of import runs; default: the real ones. */
  readonly importSources?: ImportSources | undefined;
}

/**
 * The secrets of REST connections are opened when a run loads its connection, not before: a missing
 * key fails that run, not the queue.
 */
function lazySecrets({ secretKey, dataDir }: Partial<Pick<Config, 'secretKey' | 'dataDir'>>): () => SecretBox {
  let box: SecretBox | undefined;
  return () => {
    if (secretKey === undefined && dataDir === undefined) {
      throw new Error('stored secrets cannot be opened: the job queue was given neither IFW_SECRET_KEY nor a data directory');
    }
    return (box ??= createSecretBox({ secretKey, dataDir: dataDir ?? '' }));
  };
}

export type JobConfig = Pick<Config, 'retentionDays'> &
  Partial<Pick<Config, 'runRetentionDays'>> &
  Partial<Pick<Config, 'secretKey' | 'dataDir' | 'outbound'>>;

export function jobKinds(config: JobConfig, options: JobOptions = {}): readonly JobKind[] {
  const secrets = lazySecrets(config);
  const outbound = config.outbound ?? DEFAULT_OUTBOUND_POLICY;
  const sources = options.importSources ?? defaultImportSources(secrets, outbound);
  return [
    bulkImportProcessor(options),
    retentionCleanup(config, [runRetention({ runRetentionDays: config.runRetentionDays ?? 30 })]),
    importRunProcessor(sources),
    endpointImport(sources),
    webhookDelivery(secrets, outbound),
  ];
}
