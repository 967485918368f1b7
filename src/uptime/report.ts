// What an edge reports to the API (POST /sync/edge/report, or in-process in the serve role): for
// each domain it watches, its state as this edge sees it and the measures gathered since its last
// report, minute by minute. The schema bounds every count and size: a report is read whole.
import { Type, type Static } from 'typebox';
import { LATENCY_BOUNDS_MS } from '../model/uptime-measure.ts';

export type DomainHealth = 'up' | 'down' | 'failover';

const Count = Type.Integer({ minimum: 0, maximum: 10_000_000 });
/** Bucket index (0 … number of bounds) → count. */
const Histogram = Type.Record(Type.String({ pattern: `^(?:[0-9]|[1-9][0-9])$` }), Count, { maxProperties: LATENCY_BOUNDS_MS.length + 1, additionalProperties: false });

export const ReportMeasure = Type.Object(
  { minute: Type.Integer({ minimum: 0, multipleOf: 60_000 }), c: Count, u: Count, r: Count, o: Count, ch: Histogram, rh: Histogram },
  { additionalProperties: false },
);

export const UptimeReport = Type.Object(
  {
    id: Type.Optional(
      Type.String({ minLength: 8, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description: 'Unique per report and kept when it is sent again: a report taken once is not counted twice' }),
    ),
    rows: Type.Array(
      Type.Object(
        {
          domain: Type.String({ minLength: 1, maxLength: 253 }),
          state: Type.Union([Type.Literal('up'), Type.Literal('down'), Type.Literal('failover')]),
          measures: Type.Array(ReportMeasure, { maxItems: 180 }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 200_000 },
    ),
  },
  { additionalProperties: false },
);
export type UptimeReport = Static<typeof UptimeReport>;
