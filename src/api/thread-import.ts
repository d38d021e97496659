// Hangar's own route for moving in (`hangar migrate`): a thread's checkpoint history, as another server's history
// route answers it, written into this server's checkpointer. Idempotent: checkpoints the thread has are skipped.
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { CheckpointImporter } from "../runs/checkpoint-import.js";
import type { ApiContext } from "./context.js";
import * as S from "./schemas.js";

/** At most this many checkpoints per request (a client sends a long history in several). */
export const IMPORT_MAX_CHECKPOINTS = 1000;

const Ref = z.object({ checkpoint_id: S.Uuid, checkpoint_ns: z.string().optional() }).loose();

/** A ThreadState as the history routes answer it; only what the import reads is checked. */
const ImportedState = z
  .object({
    checkpoint: Ref,
    parent_checkpoint: Ref.nullable().optional(),
    values: z.record(z.string(), z.unknown(), {
      error: "must be an object (graphs whose state is a single value are not supported)",
    }),
    next: z.array(z.string()),
    tasks: z
      .array(
        z
          .object({
            id: z.string().min(1),
            name: z.string().min(1),
            interrupts: z.array(z.unknown()).nullable().optional(),
            result: z.unknown().optional(),
          })
          .loose(),
      )
      .optional(),
    metadata: S.Obj.nullable().optional(),
    created_at: z.iso.datetime({ offset: true }).nullable().optional(),
  })
  .loose();

export const HistoryImport = z.object({
  checkpoints: z.array(ImportedState).min(1).max(IMPORT_MAX_CHECKPOINTS),
});

export function threadImportRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  const importer = new CheckpointImporter(ctx.storage, ctx.threadState, (id) => ctx.runs.isBusy(id));
  return async (app) => {
    app.post(
      "/threads/:thread_id/history/import",
      {
        schema: {
          tags: ["Threads"],
          summary: "Import checkpoints into a thread (Hangar)",
          description:
            "Writes a thread's checkpoints, given as the history routes answer them (values, next, tasks with " +
            "their results and interrupts, metadata, parent), into this server. Checkpoints the thread already " +
            "has are skipped. Used by `hangar migrate`.",
          params: S.ThreadIdParams,
          body: HistoryImport,
        },
      },
      async (req) => {
        // Adding to a thread's history is an update of the thread: its owner's (or anyone's without custom auth).
        await ctx.guard.thread(req, req.params.thread_id, "threads:update");
        return importer.import(req.params.thread_id, req.body.checkpoints);
      },
    );
  };
}
