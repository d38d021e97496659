// The metrics page: the server's own metrics (GET /metrics?format=json, prom-client's registry as JSON, see
// src/api/metrics.ts) read every 2 s while the page is open, the last 60 samples drawn as small line charts in
// inline SVG: runs running and pending (the queue), runs finished by status, stream clients, HTTP requests per
// second and their mean latency (from the request histogram's count and sum), memory and event loop lag.
import { useEffect, useState } from "react";
import type { Client } from "@langchain/langgraph-sdk";
import { apiUrl, authHeaders, type Credential } from "./api.ts";
import { errorText } from "./load.ts";
import "./pages.css";

const EVERY_MS = 2000;
const KEEP = 60;

/** One metric of prom-client's `getMetricsAsJSON()`. */
type PromMetric = {
  name: string;
  help: string;
  type: string;
  values: { value: number; labels: Record<string, string | number>; metricName?: string }[];
};

/** One reading: the time, and each series' value (absent when the server does not expose it). */
type Sample = { t: number; values: Record<string, number> };

const REQUESTS = "hangar_http_request_duration_seconds";

/** The values of one reading, derived from the registry's JSON (and the reading before, for rates). */
function reading(metrics: PromMetric[], t: number, before: Sample | undefined): Sample {
  const byName = new Map(metrics.map((m) => [m.name, m]));
  const values: Record<string, number> = {};
  const single = (name: string, key: string, scale = 1) => {
    const v = byName.get(name)?.values[0]?.value;
    if (typeof v === "number") values[key] = v * scale;
  };
  single("hangar_runs_running", "running");
  single("hangar_runs_pending", "pending");
  single("hangar_stream_clients", "streams");
  single("hangar_process_resident_memory_bytes", "rss", 1 / 2 ** 20);
  single("hangar_nodejs_heap_size_used_bytes", "heap", 1 / 2 ** 20);
  single("hangar_nodejs_eventloop_lag_p99_seconds", "lag", 1000);
  const finished = byName.get("hangar_runs_finished_total");
  if (finished) {
    values["finished:total"] = 0;
    for (const v of finished.values) {
      const status = String(v.labels.status ?? "?");
      values[`finished:${status}`] = (values[`finished:${status}`] ?? 0) + v.value;
      values["finished:total"] += v.value;
    }
  }
  const requests = byName.get(REQUESTS);
  if (requests) {
    let count = 0;
    let sum = 0;
    for (const v of requests.values) {
      if (v.metricName === `${REQUESTS}_count`) count += v.value;
      else if (v.metricName === `${REQUESTS}_sum`) sum += v.value;
    }
    values["http:count"] = count;
    values["http:sum"] = sum;
    const c0 = before?.values["http:count"];
    const s0 = before?.values["http:sum"];
    if (before && c0 !== undefined && s0 !== undefined && count >= c0) {
      const dt = (t - before.t) / 1000;
      if (dt > 0) values.rate = (count - c0) / dt;
      // No request in between: no latency to show (a gap, not a zero).
      if (count > c0) values.latency = ((sum - s0) / (count - c0)) * 1000;
    }
  }
  return { t, values };
}

type ChartDef = {
  title: string;
  /** The metrics it draws, as the server names them. */
  metric: string;
  unit?: string;
  /** Its series: [key in Sample.values, label]; a function for series found in the samples. */
  series: [string, string][] | ((samples: Sample[]) => [string, string][]);
};

const CHARTS: ChartDef[] = [
  {
    title: "Runs running and pending",
    metric: "hangar_runs_running, hangar_runs_pending",
    series: [
      ["running", "running"],
      ["pending", "pending (queue depth)"],
    ],
  },
  {
    title: "Runs finished by status (since the server started)",
    metric: "hangar_runs_finished_total",
    series: (samples) => {
      const statuses = new Set<string>();
      for (const s of samples)
        for (const k of Object.keys(s.values))
          if (k.startsWith("finished:") && k !== "finished:total") statuses.add(k);
      // One line per status; until a run ends, the total (0) alone.
      return statuses.size
        ? [...statuses].sort().map((k): [string, string] => [k, k.slice(9)])
        : [["finished:total", "all"]];
    },
  },
  { title: "Stream clients", metric: "hangar_stream_clients", series: [["streams", "open streams"]] },
  {
    title: "HTTP requests per second",
    metric: `${REQUESTS}_count`,
    unit: "/s",
    series: [["rate", "requests/s"]],
  },
  {
    title: "Mean HTTP latency",
    metric: `${REQUESTS}_sum / _count`,
    unit: "ms",
    series: [["latency", "mean latency"]],
  },
  {
    title: "Memory",
    metric: "hangar_process_resident_memory_bytes, hangar_nodejs_heap_size_used_bytes",
    unit: "MB",
    series: [
      ["rss", "resident"],
      ["heap", "heap used"],
    ],
  },
  {
    title: "Event loop lag (p99)",
    metric: "hangar_nodejs_eventloop_lag_p99_seconds",
    unit: "ms",
    series: [["lag", "p99 lag"]],
  },
];

const COLORS = ["#3d6fe0", "#d97706", "#15803d", "#b3261e", "#7c3aed", "#0e7490"];
const W = 360;
const H = 120;
const LEFT = 44;
const TOP = 8;
const BOTTOM = 8;

function format(v: number | undefined, unit = ""): string {
  if (v === undefined) return "—";
  const text = Number.isInteger(v)
    ? String(v)
    : v >= 100
      ? v.toFixed(0)
      : v >= 1
        ? v.toFixed(1)
        : v.toFixed(2);
  return unit ? `${text} ${unit}` : text;
}

/** A round axis top at or above `max`: 1, 2 or 5 times a power of ten. */
function niceMax(max: number): number {
  if (max <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * p).find((m) => m >= max) ?? max;
}

function Chart({ def, samples }: { def: ChartDef; samples: Sample[] }) {
  const series = typeof def.series === "function" ? def.series(samples) : def.series;
  const latest = samples[samples.length - 1];
  const exposed = samples.some((s) => series.some(([k]) => s.values[k] !== undefined));
  let max = 0;
  for (const s of samples) for (const [k] of series) max = Math.max(max, s.values[k] ?? 0);
  const top = niceMax(max);
  const x = (i: number) => LEFT + ((W - LEFT - 4) * (KEEP - samples.length + i)) / (KEEP - 1);
  const y = (v: number) => TOP + (H - TOP - BOTTOM) * (1 - v / top);
  /** A series' line: one path, broken where a sample has no value. */
  const path = (key: string) => {
    let d = "";
    let pen = false;
    samples.forEach((s, i) => {
      const v = s.values[key];
      if (v === undefined) {
        pen = false;
        return;
      }
      d += `${pen ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
      pen = true;
    });
    return d;
  };
  const summary = series.map(([k, label]) => `${label} ${format(latest?.values[k], def.unit)}`).join(", ");
  return (
    <figure
      className="metric-chart"
      data-testid="metric-chart"
      data-metric={def.metric}
      data-samples={samples.length}
      aria-label={`${def.title} (${def.metric})`}
    >
      <figcaption>
        <strong>{def.title}</strong>
        <code className="muted">{def.metric}</code>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={exposed ? `latest: ${summary}` : "no data"}>
        <line className="axis" x1={LEFT} x2={W - 4} y1={y(0)} y2={y(0)} />
        <line className="grid" x1={LEFT} x2={W - 4} y1={y(top)} y2={y(top)} />
        <line className="grid" x1={LEFT} x2={W - 4} y1={y(top / 2)} y2={y(top / 2)} />
        <text x={LEFT - 4} y={y(top) + 4} textAnchor="end">
          {format(top)}
        </text>
        <text x={LEFT - 4} y={y(0) + 4} textAnchor="end">
          0
        </text>
        {series.map(([k], i) => (
          <path key={k} d={path(k)} stroke={COLORS[i % COLORS.length]} className="line" />
        ))}
        {/* The latest value of each series as a dot (a single sample has no line to draw). */}
        {series.map(([k], i) => {
          const v = latest?.values[k];
          return v === undefined ? null : (
            <circle key={k} cx={x(samples.length - 1)} cy={y(v)} r={2.5} fill={COLORS[i % COLORS.length]} />
          );
        })}
      </svg>
      {exposed ? (
        <ul className="legend">
          {series.map(([k, label], i) => (
            <li key={k}>
              <span className="swatch" style={{ background: COLORS[i % COLORS.length] }} aria-hidden="true" />
              {label}: <strong>{format(latest?.values[k], def.unit)}</strong>
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">{samples.length ? "No value in these samples yet." : "Waiting for a sample…"}</p>
      )}
    </figure>
  );
}

export function MetricsPage({ credential }: { client: Client; credential: Credential }) {
  const [samples, setSamples] = useState<Sample[]>([]);
  const [error, setError] = useState<string>();
  const [paused, setPaused] = useState(false);
  useEffect(() => {
    if (paused) return;
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      const started = Date.now();
      try {
        const res = await fetch(`${apiUrl()}/metrics?format=json`, { headers: authHeaders(credential) });
        // A server without /metrics (another server that speaks the API): said once, not asked again.
        if (res.status === 404) {
          if (live)
            setError("This server serves no /metrics (Hangar's Agent Server does): nothing to chart.");
          return;
        }
        if (!res.ok) throw new Error(`GET /metrics: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
        const metrics = (await res.json()) as PromMetric[];
        if (!Array.isArray(metrics)) throw new Error("GET /metrics: not a list of metrics");
        const t = Date.now();
        if (live) {
          setSamples((s) => [...s, reading(metrics, t, s[s.length - 1])].slice(-KEEP));
          setError(undefined);
        }
      } catch (e) {
        if (live) setError(errorText(e));
      }
      if (live) timer = setTimeout(tick, Math.max(0, EVERY_MS - (Date.now() - started)));
    };
    void tick();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [credential, paused]);
  const last = samples[samples.length - 1];
  return (
    <section aria-label="metrics" className="console-page">
      <div className="metrics-head">
        <h2>Metrics</h2>
        <button type="button" aria-pressed={paused} onClick={() => setPaused(!paused)}>
          {paused ? "Resume" : "Pause"}
        </button>
        <span className="muted" role="status">
          {paused ? "Paused" : "Every 2 s"} · {samples.length}/{KEEP} samples
          {last ? ` · last at ${new Date(last.t).toLocaleTimeString()}` : ""}
        </span>
      </div>
      {error && <p className="error">{error}</p>}
      <div className="metric-grid">
        {CHARTS.map((def) => (
          <Chart key={def.title} def={def} samples={samples} />
        ))}
      </div>
    </section>
  );
}
