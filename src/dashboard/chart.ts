/**
 * A per-minute bar chart as inline SVG, computed on the server: no chart library, no script, readable
 * by a screen reader through its title and the table beside it.
 */
import { html, type Html } from '../console/html.js';
import type { MinuteCount } from '../bulk-import/page-queries.js';

export interface Series {
  readonly label: string;
  readonly color: string;
  readonly points: readonly MinuteCount[];
}

const WIDTH = 720;
const HEIGHT = 140;

/** The last `minutes` minutes up to `now`, as `YYYY-MM-DDTHH:MM` keys, oldest first. */
export function minuteKeys(now: Date, minutes: number): string[] {
  const end = Math.floor(now.getTime() / 60_000) * 60_000;
  return Array.from({ length: minutes }, (_, i) => new Date(end - (minutes - 1 - i) * 60_000).toISOString().slice(0, 16));
}

export function perMinuteChart(title: string, keys: readonly string[], series: Series): Html {
  const byMinute = new Map(series.points.map((p) => [p.minute, p.count]));
  const values = keys.map((k) => byMinute.get(k) ?? 0);
  const peak = Math.max(0, ...values);
  const max = Math.max(1, peak);
  const bar = WIDTH / keys.length;
  const total = values.reduce((a, b) => a + b, 0);
  const bars = values.map((v, i) => {
    const h = Math.round((v / max) * (HEIGHT - 20));
    return html`<rect
      x="${(i * bar).toFixed(1)}"
      y="${HEIGHT - h}"
      width="${Math.max(1, bar - 1).toFixed(1)}"
      height="${h}"
      fill="${series.color}"
      ><title>${keys[i]} UTC: ${v}</title></rect
    >`;
  });
  return html`<figure>
    <figcaption>
      ${title}: ${total.toLocaleString('en')} in the last ${keys.length} minutes (highest ${peak.toLocaleString('en')} per minute)
    </figcaption>
    <svg
      class="chart"
      role="img"
      aria-label="${title} per minute"
      viewBox="0 0 ${WIDTH} ${HEIGHT + 14}"
      width="100%"
      height="${HEIGHT + 14}"
    >
      ${bars}
      <text x="0" y="${HEIGHT + 12}">${keys[0] ?? ''}</text>
      <text x="${WIDTH}" y="${HEIGHT + 12}" text-anchor="end">${keys[keys.length - 1] ?? ''} UTC</text>
    </svg>
  </figure>`;
}
