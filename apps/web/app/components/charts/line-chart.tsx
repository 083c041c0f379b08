import { scaleLinear } from 'd3-scale';
import './charts.css';
import { axisUnitFor, type AxisUnit } from './axis-unit';

/** One line: a name and one value per category (null: nothing measured there, a gap). */
export interface LineSeries {
  name: string;
  values: (number | null)[];
}

export interface LineChartProps {
  /** Short title, read out first and shown above the chart. */
  title: string;
  /** One sentence saying what the chart shows (the SVG's description). */
  description: string;
  /** X-axis categories (sample times), left to right. */
  categories: string[];
  series: LineSeries[];
  /** Formats a value for labels, tooltips and the data table. */
  format: (value: number) => string;
  /** Units the y-axis may use, smallest first (as StackedBarChart's). */
  units?: readonly AxisUnit[];
  /** Label every nth category on the axis (all are in the data table). */
  labelEvery?: number;
  /** Stable id prefix for aria references. */
  id: string;
}

const WIDTH = 720;
const HEIGHT = 240;
const PAD = { top: 12, right: 12, bottom: 28, left: 64 };
const TICKS = 4;
const PLAIN: readonly AxisUnit[] = [{ name: '', size: 1 }];

/**
 * LineChart draws series that do not add up (percentiles) as server-rendered SVG lines, beside
 * each other on one axis: no client JavaScript, like StackedBarChart. A category without a value
 * breaks its line (nothing measured then is not zero); a lone value is drawn as a dot. Every
 * point is focusable and labelled, and the numbers are in a data table under a disclosure.
 */
export function LineChart({
  title,
  description,
  categories,
  series,
  format,
  labelEvery = 1,
  units = PLAIN,
  id,
}: LineChartProps) {
  const peak = Math.max(0, ...series.flatMap((s) => s.values.map((v) => v ?? 0)));
  const unit = axisUnitFor(peak, units);
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = categories.length > 0 ? plotW / categories.length : plotW;
  const x = (i: number) => PAD.left + i * slot + slot / 2;
  const scale = scaleLinear()
    .domain([0, peak > 0 ? peak / unit.size : 1])
    .range([PAD.top + plotH, PAD.top])
    .nice(TICKS);
  const y = (v: number) => scale(v / unit.size);
  const ticks = scale.ticks(TICKS);
  const tickText = scale.tickFormat(TICKS);
  /** The runs of consecutive measured points of one series, each one polyline. */
  const runsOf = (values: (number | null)[]) => {
    const runs: [number, number][][] = [];
    let run: [number, number][] = [];
    values.forEach((v, i) => {
      if (v === null) {
        if (run.length) runs.push(run);
        run = [];
      } else run.push([x(i), y(v)]);
    });
    if (run.length) runs.push(run);
    return runs;
  };
  return (
    <figure className="chart" aria-labelledby={`${id}-title`} data-chart={id}>
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
        {series.map((s, k) => (
          <g key={s.name} data-series={s.name} className={`chart-line series-${k % 6}`}>
            {runsOf(s.values).map((run) => (
              <polyline
                key={run[0]![0]}
                points={run.map(([px, py]) => `${px},${py}`).join(' ')}
                aria-hidden="true"
              />
            ))}
            {s.values.map((v, i) => {
              if (v === null) return null;
              const label = `${s.name}, ${categories[i]}: ${format(v)}`;
              return (
                <circle
                  key={categories[i]}
                  cx={x(i)}
                  cy={y(v)}
                  r={2.5}
                  tabIndex={0}
                  role="img"
                  aria-label={label}
                >
                  <title>{label}</title>
                </circle>
              );
            })}
          </g>
        ))}
        {categories.map((category, i) =>
          i % labelEvery === 0 ? (
            <text
              key={category}
              x={x(i)}
              y={HEIGHT - 8}
              textAnchor="middle"
              className="chart-axis"
              aria-hidden="true"
            >
              {category}
            </text>
          ) : null,
        )}
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
            </tr>
          </thead>
          <tbody>
            {categories.map((category, i) => (
              <tr key={category}>
                <th scope="row">{category}</th>
                {series.map((s) => {
                  const v = s.values[i] ?? null;
                  return <td key={s.name}>{v === null ? '–' : format(v)}</td>;
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
