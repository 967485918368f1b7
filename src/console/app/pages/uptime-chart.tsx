// A uPlot time-series chart; periods marked as outages (a failed check) are shaded behind the lines.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface ChartSeries {
  label: string;
  values: Array<number | null>;
  color: string;
}

/** `span`: the period shown, in Unix seconds (the API's `from` to now), whatever the measures cover. */
export function TimeChart({ title, times, series, unit, outages, max, span }: { title: string; times: number[]; series: ChartSeries[]; unit: string; outages: boolean[]; max?: number; span: [number, number] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const step = times.length > 1 ? times[1]! - times[0]! : 60;
    const shade: uPlot.Plugin = {
      hooks: {
        drawClear: (u) => {
          const { ctx } = u;
          ctx.save();
          ctx.fillStyle = 'rgba(200, 30, 30, 0.18)';
          outages.forEach((down, i) => {
            if (!down) return;
            const left = u.valToPos(times[i]!, 'x', true);
            const right = u.valToPos(times[i]! + step, 'x', true);
            ctx.fillRect(left, u.bbox.top, Math.max(2, right - left), u.bbox.height);
          });
          ctx.restore();
        },
      },
    };
    const options: uPlot.Options = {
      width: Math.max(280, element.clientWidth),
      height: 220,
      plugins: [shade],
      scales: { x: { time: true, range: () => span }, y: max === undefined ? { auto: true } : { range: [0, max] } },
      axes: [{}, { label: unit, size: 56 }],
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, spanGaps: false, value: (_u: uPlot, v: number | null) => (v === null ? '—' : `${Math.round(v * 10) / 10} ${unit}`) }))],
    };
    const chart = new uPlot(options, [times, ...series.map((s) => s.values)] as uPlot.AlignedData, element);
    performance.mark('palisade:chart-drawn');
    const resize = () => chart.setSize({ width: Math.max(280, element.clientWidth), height: 220 });
    addEventListener('resize', resize);
    return () => {
      removeEventListener('resize', resize);
      chart.destroy();
    };
  }, [times, series, outages, unit, max, span]);
  return <figure class="chart" role="img" aria-label={title} ref={box} />;
}
