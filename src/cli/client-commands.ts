/**
 * `ifw submit` and `ifw status`: a client of a running service over HTTP. With `--wait` they poll the
 * request until it ends (client-wait.ts). The request id goes to stderr the moment it is known, so a
 * caller that stops waiting can resume with `ifw status <id> --wait`. The output and the exit codes
 * are those of every client command (client-output.ts); `ifw requests …` is request-commands.ts.
 */
import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { API, baseUrl, reach, URL_OPTION } from './client-http.js';
import { print, say, withJson } from './client-output.js';
import { scheduleOf, waitAndReport, withWaitOptions, type WaitFlags } from './client-wait.js';
import { acceptedText, addRequestCommands, detailsText } from './request-commands.js';

export function addClientCommands(program: Command): void {
  withJson(
    withWaitOptions(
      program
        .command('submit')
        .description('submit a payload to a running service (POST bulkImportRequests)')
        .requiredOption('-i, --integration <sortingOrder>', 'integration Sorting Order')
        .requiredOption('-f, --file <file>', 'file holding the JSON payload')
        .option(...URL_OPTION)
        .addHelpText('after', '\nCredentials: IFW_TOKEN (bearer token), or IFW_USER and IFW_PASSWORD (Basic).'),
    ),
  ).action(async (flags: WaitFlags & { integration: string; file: string; url?: string }) => {
    const base = baseUrl(flags.url);
    // Checked before submitting: a typo in a wait option must not leave an accepted request behind.
    if (flags.wait === true) scheduleOf(flags);
    const payload = await readFile(flags.file, 'utf8');
    const submitted = await reach('POST', `${base}${API}/bulkImportRequests`, {
      integrationSortingOrder: Number(flags.integration),
      payload,
    });
    // With --wait, stdout is the ended request alone (one JSON document with --json).
    if (submitted.status !== 202 || flags.wait !== true) print(submitted.json, acceptedText);
    if (submitted.status !== 202) {
      process.exitCode = 1;
      return;
    }
    const { requestId } = submitted.json as { requestId: string };
    say(`request ${requestId} accepted; follow it with: ifw status ${requestId}${flags.wait === true ? '' : ' --wait'}`);
    // The spec's guidance: the first poll after the first interval, not at once.
    if (flags.wait === true) await waitAndReport(base, requestId, flags, false);
  });

  withJson(
    withWaitOptions(
      program
        .command('status')
        .description('show a bulk import request of a running service')
        .argument('<requestId>')
        .option(...URL_OPTION)
        .option('--details', 'show counts and per-record errors'),
    ),
  ).action(async (requestId: string, flags: WaitFlags & { url?: string; details?: boolean }) => {
    const base = baseUrl(flags.url);
    if (flags.wait === true) {
      say(`waiting for request ${requestId}`);
      // Resuming: the request may have ended meanwhile, so the first poll is at once.
      await waitAndReport(base, requestId, flags, true);
      return;
    }
    const polled = await reach('GET', `${base}${API}/bulkImportRequests(${requestId})${flags.details === true ? '/details' : ''}`);
    print(polled.json, flags.details === true ? detailsText : undefined);
    if (polled.status !== 200) process.exitCode = 1;
  });

  addRequestCommands(program);
}
