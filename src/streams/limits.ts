// How much an event stream may hold for a client that does not read, and for how long (the server sets
// them from HANGAR_STREAM_BUFFER_BYTES and HANGAR_STREAM_STALL_SECONDS; the defaults serve everyone else).

export interface StreamLimits {
  /**
   * Bytes a stream holds for its client beyond what the kernel took: the response's own buffer, and on the
   * Redis broker the events read ahead for it. Past it, the stream reads no more of its log until the client
   * catches up, so a client that does not read costs at most this much.
   */
  bufferBytes: number;
  /** A stream whose client takes nothing of what waits for it for this long is dropped (connection closed). */
  stallMs: number;
}

export const DEFAULT_STREAM_LIMITS: Readonly<StreamLimits> = { bufferBytes: 64 * 1024, stallMs: 30_000 };

let current: StreamLimits = { ...DEFAULT_STREAM_LIMITS };

/** Sets the limits of the streams opened from now on. */
export function configureStreams(next: Partial<StreamLimits>): void {
  current = { ...current, ...next };
}

/** The limits in force. */
export function streamLimits(): Readonly<StreamLimits> {
  return current;
}
