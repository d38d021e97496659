// The PUT of a source tarball upload: streams a gzip file of at most `maxUploadBytes` to `<data-dir>/uploads/`
// (inspected on the way: extracted size, links; domain/tarball.ts); the upload URLs are domain/uploads.ts's.
import { createWriteStream, mkdirSync, openSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { PassThrough, Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { CpContext } from "../domain/context.js";
import { HangarError } from "../../lib/errors.js";
import { notFound, tooLarge as tooLargeError, valueError } from "./errors.js";
import { sha256 } from "../domain/hash.js";
import { maxExtractedBytes, TarballInspector, type TarballError } from "../domain/tarball.js";

export const DEFAULT_MAX_UPLOAD_BYTES = 200 * 1024 * 1024;

/**
 * Counts bytes (413 beyond the limit), checks the gzip magic bytes (422 otherwise), and inspects the tarball as
 * it passes: 413 when it expands beyond HANGAR_CP_MAX_EXTRACTED_MB, 422 when a path or symlink leaves it.
 */
class TarballCheck extends Transform {
  size = 0;
  private head = Buffer.alloc(0);
  readonly inspector = new TarballInspector(maxExtractedBytes());
  constructor(private max: number) {
    super();
  }
  _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.max) return cb(tooLarge(this.max));
    if (this.head.length < 2) {
      this.head = Buffer.concat([this.head, chunk.subarray(0, 2 - this.head.length)]);
      if (this.head.length === 2 && !isGzip(this.head)) return cb(notGzip());
    }
    this.inspector.feed(chunk).then(() => {
      const refused = this.inspector.error;
      if (refused) return cb(refusal(refused));
      cb(null, chunk);
    }, cb);
  }
  _flush(cb: TransformCallback): void {
    if (this.head.length < 2) return cb(notGzip());
    this.inspector.finish().then((refused) => cb(refused ? refusal(refused) : null), cb);
  }
  _destroy(err: Error | null, cb: (error?: Error | null) => void): void {
    this.inspector.abort();
    cb(err);
  }
}

const refusal = (e: TarballError) =>
  e.kind === "size" ? tooLargeError(e.message) : valueError(["body"], e.message);

const isGzip = (b: Buffer) => b[0] === 0x1f && b[1] === 0x8b;
const notGzip = () =>
  valueError(["body"], "The upload is not a gzip file: send the source as a .tar.gz tarball.");
const tooLarge = (max: number) => tooLargeError(`The upload is larger than the limit of ${max} bytes.`);

/** `PUT /v2/uploads/{token}`: streams the body to its file; the token is the credential and is used once. */
export async function receiveUpload(
  ctx: CpContext,
  token: string,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const up = await ctx.store.claimUpload(sha256(token));
  if (!up) throw notFound("Upload URL not found: it expired, was already used, or never existed.");
  const dest = join(ctx.dataDir, up.path);
  const part = `${dest}.part`;
  let ok = false;
  try {
    const declared = Number(req.headers["content-length"] ?? NaN);
    if (declared > ctx.maxUploadBytes) throw tooLarge(ctx.maxUploadBytes);
    mkdirSync(dirname(dest), { recursive: true });
    const check = new TarballCheck(ctx.maxUploadBytes);
    // The request is piped through a PassThrough so that a failure destroys that, not the socket: the error
    // must still be answered.
    const body = new PassThrough();
    // A client that goes away mid-body fails the upload (pipe() alone would leave it waiting for ever).
    const onGone = () => {
      if (!req.raw.complete) body.destroy(valueError(["body"], "The upload was interrupted before its end."));
    };
    req.raw.once("close", onGone);
    req.raw.once("error", onGone);
    req.raw.pipe(body);
    try {
      // Opened here, not by the stream: a failure then never races an open that would leave the file behind.
      await pipeline(body, check, createWriteStream(part, { fd: openSync(part, "w") }));
    } finally {
      req.raw.unpipe(body);
      req.raw.off("close", onGone);
      req.raw.off("error", onGone);
    }
    renameSync(part, dest);
    // Marked done before answering: a create or PATCH sent right after the answer finds it.
    await ctx.store.finishUpload(up.id, true);
    ok = true;
    reply.status(200).send({ source_tarball_path: up.path, size: check.size });
  } catch (e) {
    rmSync(part, { force: true });
    // The rest of a refused body is not read: close the connection after answering.
    if (e instanceof HangarError) reply.header("connection", "close");
    throw e;
  } finally {
    if (!ok) await ctx.store.finishUpload(up.id, false);
  }
}
