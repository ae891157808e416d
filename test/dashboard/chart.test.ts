/** The per-minute chart: round axis ticks, a baseline with times, stacked series, and words when it is empty. */
import { describe, expect, it } from 'vitest';
import { axisTicks, axisTop, minuteKeys, perMinuteChart } from '../../src/dashboard/chart.js';

const keys = minuteKeys(new Date('2026-11-24T10:59:30Z'), 60);

describe('the y axis', () => {
  it.each([
    [0, 1],
    [1, 1],
    [2, 2],
    [3, 5],
    [7, 10],
    [10, 10],
    [11, 20],
    [25, 50],
    [80, 100],
    [101, 200],
    [4_000, 5_000],
  ])('a peak of %i tops the axis at %i', (peak, top) => {
    expect(axisTop(peak)).toBe(top);
  });

  it('ticks 0, the middle when it is whole, and the top', () => {
    expect(axisTicks(1)).toEqual([0, 1]);
    expect(axisTicks(50)).toEqual([0, 25, 50]);
    expect(axisTicks(5)).toEqual([0, 5]);
  });
});

describe('the chart', () => {
  it('keeps the last 60 minutes, oldest first', () => {
    expect(keys).toHaveLength(60);
    expect(keys[0]).toBe('2026-11-24T10:00');
    expect(keys[59]).toBe('2026-11-24T10:59');
  });

  it('says so when there is nothing to show, and still draws its axes and baseline', () => {
    const markup = perMinuteChart({
      title: 'Requests submitted',
      noun: 'requests',
      keys,
      series: [{ label: 'Requests', points: [] }],
    }).markup;
    expect(markup).toContain('<text class="empty"');
    expect(markup).toContain('No requests in the last hour');
    expect(markup).toContain('Requests submitted: No requests in the last hour');
    expect(markup).not.toContain('<rect');
    expect(markup.match(/class="axis"/g)?.length).toBeGreaterThanOrEqual(3);
    // Times under the baseline.
    expect(markup).toContain('>10:00</text');
    expect(markup).toContain('>10:59</text');
  });

  it('stacks two series in one bar per minute and names them in a legend and in each bar', () => {
    const markup = perMinuteChart({
      title: 'Records imported',
      noun: 'records imported',
      keys,
      series: [
        { label: 'Bulk import requests', points: [{ minute: '2026-11-24T10:30', count: 20 }] },
        {
          label: 'REST import runs',
          points: [
            { minute: '2026-11-24T10:30', count: 80 },
            { minute: '2026-11-24T10:31', count: 5 },
          ],
        },
      ],
    }).markup;
    expect(markup).toContain('Records imported: 105 in the last 60 minutes (highest 100 per minute)');
    expect(markup.match(/<rect/g)).toHaveLength(3);
    expect(markup).toContain('10:30 UTC: REST import runs: 80');
    expect(markup).toContain('10:30 UTC: Bulk import requests: 20');
    expect(markup).toContain('<ul class="legend">');
    // The y axis reaches the peak: 0, 50, 100.
    for (const tick of ['>0</text>', '>50</text>', '>100</text>']) expect(markup).toContain(tick);
    expect(markup).not.toContain('No records imported in the last hour');
  });

  it('escapes what it is given', () => {
    const markup = perMinuteChart({ title: '<b>x</b>', noun: '<i>', keys, series: [{ label: 'a', points: [] }] }).markup;
    expect(markup).not.toContain('<b>');
    expect(markup).not.toContain('<i>');
  });
});
