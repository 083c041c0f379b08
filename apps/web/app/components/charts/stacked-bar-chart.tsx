import { scaleLinear } from 'd3-scale';
import './charts.css';
import { axisUnitFor, type AxisUnit } from './axis-unit';

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
  /**
   * Units the y-axis may use, smallest first (e.g. s, min, h for seconds): the axis takes the
   * largest unit its maximum reaches and labels every tick in it. Default: plain numbers.
   */
  units?: readonly AxisUnit[];
  /** Label every nth category on the axis (all are in the data table). */
  labelEvery?: number;
  /** Stable id prefix for aria references. */
  id: string;
}

const WIDTH = 720;
const HEIGHT = 240;
const PAD = { top: 12, right: 12, bottom: 28, left: 56 };
/** About this many y-axis ticks (d3 picks round steps near it). */
const TICKS = 4;
const PLAIN: readonly AxisUnit[] = [{ name: '', size: 1 }];

/**
 * StackedBarChart draws stacked bars as server-rendered SVG: no client JavaScript, so it shows
 * before hydration and prints. Accessibility: the SVG is an image with a title and description;
 * every segment is focusable (Tab) and labelled ("pool web, 2026-05-01: 1.5 h"), and the same
 * numbers are in a data table under a disclosure. Colours come from CSS variables that differ
 * in dark and light schemes (charts.css).
 *
 * The bars are drawn here (one chart type, rendered on the server without client JavaScript);
 * the y-axis scale and its ticks are d3-scale's, in one unit per axis (axis-unit.ts).
 */
export function StackedBarChart({
  title,
  description,
  categories,
  series,
  format,
  labelEvery = 1,
  units = PLAIN,
  id,
}: StackedBarChartProps) {
  const totals = categories.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const peak = Math.max(0, ...totals);
  const unit = axisUnitFor(peak, units);
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = categories.length > 0 ? plotW / categories.length : plotW;
  const barW = Math.max(1, slot * 0.8);
  // The axis counts in `unit`: nice() rounds its end to a tick, ticks() picks round steps, and
  // tickFormat prints them alike (no "0 min" twice, no unit changing along the axis).
  const scale = scaleLinear()
    .domain([0, peak > 0 ? peak / unit.size : 1])
    .range([PAD.top + plotH, PAD.top])
    .nice(TICKS);
  const y = (v: number) => scale(v / unit.size);
  const ticks = scale.ticks(TICKS);
  const tickText = scale.tickFormat(TICKS);
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
          <g key={t} aria-hidden="true" data-tick={t}>
            <line
              x1={PAD.left}
              x2={WIDTH - PAD.right}
              y1={scale(t)}
              y2={scale(t)}
              className="chart-grid"
            />
            <text x={PAD.left - 6} y={scale(t) + 4} textAnchor="end" className="chart-axis">
              {unit.name ? `${tickText(t)} ${unit.name}` : tickText(t)}
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
