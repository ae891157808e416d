/**
 * A per-minute bar chart as inline SVG, computed on the server: no chart library, no script. It has a
 * y axis with round ticks, a baseline with times under it, and several series stacked with a legend;
 * a chart with nothing to show says so in words instead of leaving blank space. Screen readers get its
 * name and a one-line summary (the caption); each bar carries its minute and count as a tooltip.
 */
import { html, type Html } from '../console/html.js';
import type { MinuteCount } from '../bulk-import/page-queries.js';

export interface Series {
  readonly label: string;
  readonly points: readonly MinuteCount[];
}

export interface ChartOptions {
  readonly title: string;
  /** What is counted, plural: "No ${noun} in the last hour". */
  readonly noun: string;
  /** The minutes shown, oldest first (minuteKeys). */
  readonly keys: readonly string[];
  /** Stacked in this order, bottom first; at most two (the stylesheet has two colours). */
  readonly series: readonly Series[];
}

// The drawing's own units (the viewBox); the stylesheet scales it to the page's width.
const WIDTH = 600;
const HEIGHT = 190;
const LEFT = 52;
const RIGHT = 8;
const TOP = 10;
const BOTTOM = 42;
const PLOT_W = WIDTH - LEFT - RIGHT;
const PLOT_H = HEIGHT - TOP - BOTTOM;

/** The last `minutes` minutes up to `now`, as `YYYY-MM-DDTHH:MM` keys, oldest first. */
export function minuteKeys(now: Date, minutes: number): string[] {
  const end = Math.floor(now.getTime() / 60_000) * 60_000;
  return Array.from({ length: minutes }, (_, i) => new Date(end - (minutes - 1 - i) * 60_000).toISOString().slice(0, 16));
}

/** The top of the y axis: the peak rounded up to 1, 2 or 5 times a power of ten (at least 1). */
export function axisTop(peak: number): number {
  if (peak <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(peak));
  for (const step of [1, 2, 5, 10]) if (step * power >= peak) return step * power;
  return 10 * power;
}

/** The y axis's ticks: 0, the middle when it is a whole number, the top. */
export function axisTicks(top: number): number[] {
  return top % 2 === 0 ? [0, top / 2, top] : [0, top];
}

const y = (value: number, top: number): number => TOP + PLOT_H - (value / top) * PLOT_H;

export function perMinuteChart(options: ChartOptions): Html {
  const { title, noun, keys } = options;
  const columns = options.series.map((s) => {
    const byMinute = new Map(s.points.map((p) => [p.minute, p.count]));
    return keys.map((k) => byMinute.get(k) ?? 0);
  });
  const stacks = keys.map((_, i) => columns.reduce((sum, values) => sum + (values[i] ?? 0), 0));
  const peak = Math.max(0, ...stacks);
  const total = stacks.reduce((a, b) => a + b, 0);
  const top = axisTop(peak);
  const slot = PLOT_W / Math.max(1, keys.length);
  const bars = keys.flatMap((key, i) => {
    let base = 0;
    return columns.map((values, s) => {
      const v = values[i] ?? 0;
      const from = base;
      base += v;
      if (v === 0) return '';
      const label = options.series.length > 1 ? `${options.series[s]?.label ?? ''}: ` : '';
      return html`<rect
        class="series-${s}"
        x="${(LEFT + i * slot + 0.5).toFixed(1)}"
        y="${y(base, top).toFixed(1)}"
        width="${Math.max(1, slot - 1).toFixed(1)}"
        height="${(y(from, top) - y(base, top)).toFixed(1)}"
        ><title>${key.slice(11)} UTC: ${label}${v.toLocaleString('en')}</title></rect
      >`;
    });
  });
  const ticks = axisTicks(top).map(
    (t) =>
      html`<line class="${t === 0 ? 'axis' : 'grid'}" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y(t, top)}" y2="${y(t, top)}" />
        <text x="${LEFT - 6}" y="${y(t, top) + 4}" text-anchor="end">${t.toLocaleString('en')}</text>`,
  );
  // Times under the baseline: the first minute, every quarter of an hour, the last.
  const timeLabels = keys
    .map((key, i) => ({ key, i }))
    .filter(({ i }) => i === 0 || i === keys.length - 1 || (keys.length > 20 && i % 15 === 0 && i < keys.length - 7))
    .map(({ key, i }) => {
      const x = LEFT + i * slot + slot / 2;
      const anchor = i === 0 ? 'start' : i === keys.length - 1 ? 'end' : 'middle';
      return html`<line class="axis" x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${TOP + PLOT_H}" y2="${TOP + PLOT_H + 4}" />
        <text
          x="${(i === 0 ? LEFT : i === keys.length - 1 ? WIDTH - RIGHT : x).toFixed(1)}"
          y="${TOP + PLOT_H + 18}"
          text-anchor="${anchor}"
          >${key.slice(11)}</text
        >`;
    });
  const summary =
    total === 0
      ? `No ${noun} in the last hour`
      : `${total.toLocaleString('en')} in the last ${keys.length} minutes (highest ${peak.toLocaleString('en')} per minute)`;
  return html`<figure class="chart">
    <figcaption>${title}: ${summary}</figcaption>
    <svg
      class="chart"
      role="img"
      aria-label="${title} per minute, last ${keys.length} minutes: ${summary}"
      viewBox="0 0 ${WIDTH} ${HEIGHT}"
    >
      ${ticks}
      <line class="axis" x1="${LEFT}" x2="${LEFT}" y1="${TOP}" y2="${TOP + PLOT_H}" />
      ${bars} ${timeLabels}
      <text x="${LEFT + PLOT_W / 2}" y="${HEIGHT - 2}" text-anchor="middle">Time (UTC), one bar per minute</text>
      ${total === 0 ? html`<text class="empty" x="${LEFT + PLOT_W / 2}" y="${TOP + PLOT_H / 2}" text-anchor="middle">No ${noun} in the last hour</text>` : ''}
    </svg>
    ${
      options.series.length > 1
        ? html`<ul class="legend">
            ${options.series.map((s, i) => html`<li><span class="swatch series-${i}"></span>${s.label}</li>`)}
          </ul>`
        : ''
    }
  </figure>`;
}
