// The control plane's domain errors, on the registry of lib/errors.ts: the pydantic-shaped validation error, the
// not-found and refusal helpers, and the failures of a revision's build and start. http/errors.ts maps them to HTTP.
import {
  ConflictError,
  ForbiddenError,
  HangarError,
  InvalidInputError,
  NotFoundError,
  TooLargeError,
  UnauthorizedError,
} from "../../lib/errors.js";

export const unauthorized = (detail: string) => new UnauthorizedError(detail);
export const forbidden = (detail: string) => new ForbiddenError(detail);
export const notFound = (detail: string) => new NotFoundError(detail);
export const conflict = (detail: string) => new ConflictError(detail);
export const tooLarge = (detail: string) => new TooLargeError(detail);

export const deploymentNotFound = (id: string) => notFound(`Deployment ID ${id} not found.`);
export const revisionNotFound = (id: string) => notFound(`Revision ID ${id} not found.`);
export const listenerNotFound = (id: string) => notFound(`Listener ID ${id} not found.`);

/** One item of an HTTPValidationError, in pydantic's key order. */
export interface ValidationItem {
  type: string;
  loc: (string | number)[];
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/** Invalid input, with pydantic's items (the API answers them as a 422 HTTPValidationError). */
export class CpValidationError extends InvalidInputError {
  constructor(public items: ValidationItem[]) {
    super(items.map((i) => `${i.loc.join(".")}: ${i.msg}`).join("; "));
  }
}

/** Invalid input for a rule a schema cannot say (pydantic's `value_error`). */
export function valueError(loc: (string | number)[], message: string, input?: unknown): CpValidationError {
  return new CpValidationError([
    { type: "value_error", loc, msg: `Value error, ${message}`, input, ctx: { error: message } },
  ]);
}

/** A build that failed; the message is the reason, one line (details are in the build log). */
export class BuildError extends HangarError {
  static override readonly code = "build_failed";
}

/** A revision that could not start; the message is the reason, one line. */
export class StartError extends HangarError {
  static override readonly code = "start_failed";
}
