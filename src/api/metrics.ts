// GET /metrics: Prometheus text (or JSON) of runs by status, queue depth, stream clients, request latency.
import type { FastifyInstance } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { z } from "zod";
import type { ApiContext } from "./context.js";

/** How often the event loop's delay (hangar_nodejs_eventloop_lag_*) is sampled. */
const EVENT_LOOP_SAMPLE_MS = 100;

export class Metrics {
  readonly registry = new Registry();
  readonly runsFinished = new Counter({
    name: "hangar_runs_finished_total",
    help: "Runs that ended, by final status",
    labelNames: ["status"] as const,
    registers: [this.registry],
  });
  readonly streamClients = new Gauge({
    name: "hangar_stream_clients",
    help: "Open SSE connections (run streams, joins and thread streams)",
    registers: [this.registry],
  });
  readonly requestSeconds = new Histogram({
    name: "hangar_http_request_duration_seconds",
    help: "HTTP request latency by route",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });

  constructor(queue: () => Promise<{ pending: number; running: number }>) {
    // The event loop's delay is sampled every EVENT_LOOP_SAMPLE_MS: prom-client's default (10 ms) woke an idle server
    // 100 times a second, ~1% of a core each, which every deployment a control plane runs would pay while idle.
    collectDefaultMetrics({
      register: this.registry,
      prefix: "hangar_",
      eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
    });
    new Gauge({
      name: "hangar_runs_pending",
      help: "Runs waiting for their thread or a worker slot (queue depth)",
      registers: [this.registry],
      async collect() {
        this.set((await queue()).pending);
      },
    });
    new Gauge({
      name: "hangar_runs_running",
      help: "Runs executing now",
      registers: [this.registry],
      async collect() {
        this.set((await queue()).running);
      },
    });
  }

  /** Times every request by its route pattern (not its URL, so ids do not explode the label set). */
  instrument(app: FastifyInstance): void {
    app.addHook("onResponse", async (req, reply) => {
      if (req.routeOptions.url === "/metrics") return;
      this.requestSeconds
        .labels(req.method, req.routeOptions.url ?? "unknown", String(reply.statusCode))
        .observe(reply.elapsedTime / 1000);
    });
  }
}

export function metricsRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      "/metrics",
      {
        schema: {
          tags: ["System"],
          querystring: z.object({ format: z.enum(["prometheus", "json"]).default("prometheus") }),
        },
      },
      async (req, reply) => {
        if (req.query.format === "json") return ctx.metrics.registry.getMetricsAsJSON();
        return reply.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
      },
    );
  };
}
