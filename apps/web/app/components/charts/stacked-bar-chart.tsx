import './charts.css';

/** One stacked series: a name and one value per category, in category order. */
export interface ChartSeries {
  name: string;
  values: number[];
}

export interface StackedBarChartProps {
  /** Short title, read out first and shown above the chart. */
  title: string;
  /** One sentence saying what the chart shows (the SVG's description). */
  description: string;
  /** X-axis categories (days, sample times), left to right. */
  categories: string[];
  series: ChartSeries[];
  /** Formats a value for labels, tooltips and the data table. */
  format: (value: number) => string;
  /** Label every nth category on the axis (all are in the data table). */
  labelEvery?: number;
  /** Stable id prefix for aria references. */
  id: string;
}

const WIDTH = 720;
const HEIGHT = 240;
const PAD = { top: 12, right: 12, bottom: 28, left: 56 };

/**
 * StackedBarChart draws stacked bars as server-rendered SVG: no client JavaScript, so it shows
 * before hydration and prints. Accessibility: the SVG is an image with a title and description;
 * every segment is focusable (Tab) and labelled ("pool web, 2026-05-01: 1.5 h"), and the same
 * numbers are in a data table under a disclosure. Colours come from CSS variables that differ
 * in dark and light schemes (charts.css).
 *
 * Hand-written rather than a library: the dashboard needs one chart type, rendered on the server
 * without client JavaScript; the SVG chart libraries that fit React are client components with
 * d3 dependencies, more code than this file for what it draws.
 */
export function StackedBarChart({
  title,
  description,
  categories,
  series,
  format,
  labelEvery = 1,
  id,
}: StackedBarChartProps) {
  const totals = categories.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const max = niceMax(Math.max(0, ...totals));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = categories.length > 0 ? plotW / categories.length : plotW;
  const barW = Math.max(1, slot * 0.8);
  const y = (v: number) => PAD.top + plotH - (max === 0 ? 0 : (v / max) * plotH);
  const ticks = [0, max / 2, max];
  return (
    <figure className="chart" aria-labelledby={`${id}-title`}>
      <figcaption id={`${id}-title`} className="chart-title">
        {title}
      </figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="group"
        aria-labelledby={`${id}-title`}
        aria-describedby={`${id}-desc`}
        className="chart-svg"
      >
        <desc id={`${id}-desc`}>{description}</desc>
        {ticks.map((t) => (
          <g key={t} aria-hidden="true">
            <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(t)} y2={y(t)} className="chart-grid" />
            <text x={PAD.left - 6} y={y(t) + 4} textAnchor="end" className="chart-axis">
              {format(t)}
            </text>
          </g>
        ))}
        {categories.map((category, i) => {
          let base = 0;
          const x = PAD.left + i * slot + (slot - barW) / 2;
          return (
            <g key={category} data-category={category}>
              {series.map((s, k) => {
                const v = s.values[i] ?? 0;
                if (v <= 0) return null;
                const top = y(base + v);
                const height = y(base) - top;
                base += v;
                const label = `${s.name}, ${category}: ${format(v)}`;
                return (
                  <rect
                    key={s.name}
                    x={x}
                    y={top}
                    width={barW}
                    height={Math.max(height, 0.5)}
                    className={`chart-bar series-${k % 6}`}
                    tabIndex={0}
                    role="img"
                    aria-label={label}
                    data-series={s.name}
                  >
                    <title>{label}</title>
                  </rect>
                );
              })}
              {i % labelEvery === 0 ? (
                <text
                  x={x + barW / 2}
                  y={HEIGHT - 8}
                  textAnchor="middle"
                  className="chart-axis"
                  aria-hidden="true"
                >
                  {category}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <ul className="chart-legend" aria-label={`${title}: legend`}>
        {series.map((s, k) => (
          <li key={s.name}>
            <span className={`chart-swatch series-${k % 6}`} aria-hidden="true" />
            {s.name}
          </li>
        ))}
      </ul>
      <details className="chart-data">
        <summary>Data table</summary>
        <table>
          <thead>
            <tr>
              <th scope="col" />
              {series.map((s) => (
                <th key={s.name} scope="col">
                  {s.name}
                </th>
              ))}
              <th scope="col">Total</th>
            </tr>
          </thead>
          <tbody>
            {categories.map((category, i) => (
              <tr key={category}>
                <th scope="row">{category}</th>
                {series.map((s) => (
                  <td key={s.name}>{format(s.values[i] ?? 0)}</td>
                ))}
                <td>{format(totals[i] ?? 0)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

/** niceMax rounds an axis maximum up to 1, 2 or 5 times a power of ten. */
export function niceMax(value: number): number {
  if (value <= 0) return 0;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power;
  return 10 * power;
}
