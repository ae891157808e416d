/**
 * The rules of response actions (table-driven): which statuses may stop or skip, one action per
 * status, skip only for the types that count their pages, and the console's text form.
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import type { PaginationType } from '../../src/pagination/index.js';
import {
  actionFor,
  parseResponseActions,
  refusedStatus,
  responseActionsFromColumn,
  responseActionsText,
  validateResponseActions,
} from '../../src/rest-source/response-actions.js';

const refusal = (run: () => unknown): string => {
  try {
    run();
  } catch (err) {
    if (err instanceof AppError) return err.message;
    throw err;
  }
  throw new Error('not refused');
};

describe('which statuses may carry an action', () => {
  it.each([201, 202, 204, 205, 206, 299, 400, 404, 409, 410, 416, 422, 451, 499])('%i may', (status) => {
    expect(refusedStatus(status)).toBeNull();
  });

  it.each([
    [200, '200 is a page of records; a 2xx other than 200 (such as 204) or a 4xx may stop or skip'],
    [
      401,
      "401 Unauthorized cannot stop or skip: it says the credentials are wrong or missing; fix the connection's authentication instead",
    ],
    [
      403,
      "403 Forbidden cannot stop or skip: it says the credentials may not read this; fix the connection's authentication or its permissions instead",
    ],
    [407, '407 Proxy Authentication Required cannot stop or skip: it says a proxy wants credentials; fix the proxy instead'],
    [408, '408 Request Timeout cannot stop or skip: it says the request timed out, which is not the end of the records'],
    [
      429,
      '429 Too Many Requests cannot stop or skip: it says the API limits the rate; it is retried with backoff (maxRetries, initialDelayMs) instead',
    ],
    [
      500,
      '500 Internal Server Error cannot stop or skip: 5xx answers are server errors, retried and then failing the run, so that nothing is imported from a run that broke',
    ],
    [503, expect.stringContaining('503 Service Unavailable cannot stop or skip: 5xx answers')],
    [301, '301 Moved Permanently cannot stop or skip: redirects are not followed; use the final URL'],
    [304, expect.stringContaining('304 Not Modified cannot stop or skip')],
    [100, '100 is an informational status, never a final answer'],
    [99, '99 is not an HTTP status (100 to 599)'],
    [600, '600 is not an HTTP status (100 to 599)'],
    [404.5, '404.5 is not an HTTP status (100 to 599)'],
  ])('%i may not: %s', (status, why) => {
    expect(refusedStatus(status)).toEqual(why);
  });
});

describe('validateResponseActions', () => {
  const at = 'responseActions';

  it.each([
    ['left out', undefined, []],
    ['null', null, []],
    ['empty', [], []],
    ['one stop', [{ status: 404, action: 'stop' }], [{ status: 404, action: 'stop' }]],
    [
      'several, sorted by status',
      [
        { status: 410, action: 'skip' },
        { status: 204, action: 'stop' },
        { status: 404, action: 'stop' },
      ],
      [
        { status: 204, action: 'stop' },
        { status: 404, action: 'stop' },
        { status: 410, action: 'skip' },
      ],
    ],
  ])('%s on Page Number', (_name, input, expected) => {
    expect(validateResponseActions(input, 'pageNumber', at)).toEqual(expected);
  });

  it.each<[string, { status: number; action: string }[], PaginationType, string]>([
    ['a credentials status', [{ status: 401, action: 'stop' }], 'pageNumber', 'responseActions: 401 Unauthorized cannot stop or skip'],
    ['the rate limit', [{ status: 429, action: 'skip' }], 'offsetLimit', 'responseActions: 429 Too Many Requests cannot stop or skip'],
    ['a server error', [{ status: 500, action: 'stop' }], 'none', 'responseActions: 500 Internal Server Error cannot stop or skip'],
    ['a page', [{ status: 200, action: 'stop' }], 'nextLink', 'responseActions: 200 is a page of records'],
    [
      'a status twice',
      [
        { status: 404, action: 'stop' },
        { status: 404, action: 'skip' },
      ],
      'pageNumber',
      'responseActions: 404 is listed twice; give each status one action',
    ],
    [
      'an unknown action',
      [{ status: 404, action: 'ignore' }],
      'pageNumber',
      'responseActions: the action of 404 must be stop or skip, got "ignore"',
    ],
    [
      'skip on Next Link',
      [{ status: 410, action: 'skip' }],
      'nextLink',
      'responseActions: 410 skip: Next Link pagination finds the next page in the page itself, so a skipped page would end the run; use stop, or a type that counts its pages (Page Number, Offset/Limit)',
    ],
    ['skip on None', [{ status: 410, action: 'skip' }], 'none', 'responseActions: 410 skip: None pagination'],
  ])('refuses %s', (_name, input, type, message) => {
    expect(refusal(() => validateResponseActions(input, type, at))).toContain(message);
  });

  it('refuses more than 20', () => {
    const many = Array.from({ length: 21 }, (_, i) => ({ status: 400 + i, action: 'stop' }));
    expect(refusal(() => validateResponseActions(many, 'none', at))).toBe('responseActions: at most 20 response actions, got 21');
  });

  it('skip is accepted on Offset/Limit too', () => {
    expect(validateResponseActions([{ status: 410, action: 'skip' }], 'offsetLimit', at)).toEqual([{ status: 410, action: 'skip' }]);
  });
});

describe('actionFor', () => {
  const actions = [
    { status: 204, action: 'stop' },
    { status: 410, action: 'skip' },
  ] as const;
  it.each([
    [204, { status: 204, action: 'stop' }],
    [410, { status: 410, action: 'skip' }],
    [404, undefined],
    [200, undefined],
  ])('%i → %o', (status, expected) => {
    expect(actionFor(actions, status)).toEqual(expected);
  });
  it('finds nothing when there are none (the default)', () => {
    expect(actionFor([], 404)).toBeUndefined();
  });
});

describe("the console's text form", () => {
  it.each([
    ['', []],
    ['404 stop', [{ status: 404, action: 'stop' }]],
    [
      '404 stop, 410 skip',
      [
        { status: 404, action: 'stop' },
        { status: 410, action: 'skip' },
      ],
    ],
    [
      '404: STOP\n410=skip;',
      [
        { status: 404, action: 'stop' },
        { status: 410, action: 'skip' },
      ],
    ],
  ])('reads %j', (text, expected) => {
    expect(parseResponseActions(text, 'responseActions')).toEqual(expected);
  });

  it.each(['404', 'stop 404', '4040 stop', '404 stop please'])('refuses %j naming the item', (text) => {
    expect(refusal(() => parseResponseActions(text, 'responseActions'))).toBe(
      `responseActions: "${text}" is not a status and an action; write for example 404 stop, 410 skip`,
    );
  });

  it('writes what it reads', () => {
    const actions = [
      { status: 404, action: 'stop' },
      { status: 410, action: 'skip' },
    ] as const;
    expect(responseActionsText(actions)).toBe('404 stop, 410 skip');
    expect(parseResponseActions(responseActionsText(actions), 'responseActions')).toEqual(actions);
  });
});

describe('the stored column', () => {
  it('reads what the service writes', () => {
    expect(responseActionsFromColumn('[{"status":404,"action":"stop"}]', 'items')).toEqual([{ status: 404, action: 'stop' }]);
    expect(responseActionsFromColumn('[]', 'items')).toEqual([]);
  });
  it('refuses a row changed by hand, naming the endpoint', () => {
    expect(() => responseActionsFromColumn('[{"status":404,"action":"ignore"}]', 'items')).toThrow(
      'REST API endpoint "items" has response_actions [{"status":404,"action":"ignore"}], which the service did not write',
    );
  });
});
