// Uptime as the edges measure it: the state now (overall and per node), availability and response
// time (p50, p95) per minute, hour or day for all nodes or one, outages shaded and listed.
import { useMemo, useState } from 'preact/hooks';
import { get, seg } from '../api.ts';
import type { Figures, Uptime, UptimePeriod } from '../types.ts';
import { Loading, ProblemNote, SelectField, useLoad, when } from '../ui.tsx';
import { TimeChart, type ChartSeries } from './uptime-chart.tsx';

type Resolution = 'minute' | 'hour' | 'day';

const STATE_WORDS: Record<string, string> = { up: 'Up', down: 'Down', failover: 'Down — on the failover backend', unknown: 'Unknown (no report yet)' };

const figuresOf = (period: UptimePeriod, node: string): Figures | undefined => (node === 'all' ? period : period.nodes[node]);
const isOutage = (f: Figures | undefined) => Boolean(f && (f.checks_failed > 0 || (f.checks === 0 && f.requests_failed > 0)));

/** The charts' series and span, and the periods with outages, for one resolution and node (all or one). */
function chartOf(data: Uptime, resolution: Resolution, node: string) {
  const periods = data[resolution].periods;
  const times = periods.map((p) => Date.parse(p.start) / 1000);
  const figures = periods.map((p) => figuresOf(p, node));
  const availability: ChartSeries[] = [{ label: 'Availability', color: '#1f6f3f', values: figures.map((f) => f?.availability ?? null) }];
  const response: ChartSeries[] = [
    { label: 'p50', color: '#1d4ed8', values: figures.map((f) => f?.response_ms.p50 ?? null) },
    { label: 'p95', color: '#b45309', values: figures.map((f) => f?.response_ms.p95 ?? null) },
  ];
  const outages = figures.map(isOutage);
  const step = { minute: 60, hour: 3600, day: 86_400 }[resolution];
  // From the first measure (not before the API's window) to now: a new domain's few minutes fill the chart.
  const measured = times.filter((_t, i) => figures[i] && (figures[i].checks > 0 || figures[i].requests > 0));
  const from = Math.max(Date.parse(data[resolution].from) / 1000, (measured[0] ?? 0) - step);
  const span: [number, number] = [from, Math.max(Date.now() / 1000, (times[times.length - 1] ?? 0) + step)];
  return { span, times, availability, response, outages, periods: periods.filter((_p, i) => outages[i]) };
}

export function UptimeTab({ domain }: { domain: string }) {
  // Marks for bench/console.ts: the answer's arrival here, each chart drawn (uptime-chart.tsx).
  const loaded = useLoad(() => get<Uptime>(`/domains/${seg(domain)}/uptime`).then((d) => (performance.mark('palisade:uptime-data'), d)), [domain]);
  const [resolution, setResolution] = useState<Resolution>('minute');
  const [node, setNode] = useState('all');
  const data = loaded.data;
  const chart = useMemo(() => data && chartOf(data, resolution, node), [data, resolution, node]);
  const nodeIds = data ? Object.keys({ ...data.nodes, ...data.minute.summary.nodes, ...data.day.summary.nodes }) : [];
  return (
    <section aria-labelledby="uptime-title">
      <h2 id="uptime-title">Uptime</h2>
      <ProblemNote problem={loaded.problem} />
      {!data && !loaded.problem && <Loading what="uptime" />}
      {data && chart && (
        <>
          <p id="uptime-state" class={`state state-${data.state}`}>
            <strong>{STATE_WORDS[data.state] ?? data.state}</strong>
            {data.since && ` since ${when(data.since)}`}
            {data.flapping && ' (changing often: events are held until it settles)'}
          </p>
          {Object.keys(data.nodes).length > 0 && (
            <ul class="node-states" aria-label="State per edge node">
              {Object.entries(data.nodes).map(([id, n]) => (
                <li key={id}>
                  Node {id}: {n.state} since {when(n.since)}
                </li>
              ))}
            </ul>
          )}
          <div class="inline">
            <SelectField label="Per" name="resolution" value={resolution} onValue={setResolution} options={[['minute', 'Minute'], ['hour', 'Hour'], ['day', 'Day']]} />
            <SelectField label="Edge node" name="node" value={node} onValue={setNode} options={[['all', 'All nodes'], ...nodeIds.map((id): [string, string] => [id, `Node ${id}`])]} />
            <button type="button" class="secondary" onClick={loaded.reload}>
              Refresh
            </button>
          </div>
          {chart.availability[0]!.values.every((v) => v === null) && chart.response[0]!.values.every((v) => v === null) ? (
            <p class="empty">No measures yet: the edges report every half minute once the domain receives traffic or checks.</p>
          ) : (
            <>
              <h3>Availability</h3>
              <TimeChart title={`Availability per ${resolution}, in per cent; outages shaded`} times={chart.times} series={chart.availability} unit="%" outages={chart.outages} max={100} span={chart.span} />
              <h3>Response time</h3>
              <TimeChart title={`Backend response time per ${resolution}, p50 and p95, in milliseconds`} times={chart.times} series={chart.response} unit="ms" outages={chart.outages} span={chart.span} />
            </>
          )}
          <h3>Outages</h3>
          {chart.periods.length === 0 ? (
            <p id="no-outages">No failed checks in this period.</p>
          ) : (
            <OutageTable periods={chart.periods} resolution={resolution} node={node} />
          )}
        </>
      )}
    </section>
  );
}

/** The periods with failed checks, with the figures of the node chosen (or all). */
function OutageTable({ periods, resolution, node }: { periods: UptimePeriod[]; resolution: Resolution; node: string }) {
  return (
    <div class="table-wrap">
      <table id="outages">
        <caption class="visually-hidden">Periods with failed checks</caption>
        <thead>
          <tr>
            <th scope="col">{resolution[0]!.toUpperCase() + resolution.slice(1)} from</th>
            <th scope="col">Checks failed</th>
            <th scope="col">Availability</th>
          </tr>
        </thead>
        <tbody>
          {periods.map((p) => {
            const f = figuresOf(p, node)!;
            return (
              <tr key={p.start}>
                <td>{when(p.start)}</td>
                <td>
                  {f.checks_failed} of {f.checks}
                </td>
                <td>{f.availability === null ? '—' : `${f.availability.toFixed(1)} %`}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
