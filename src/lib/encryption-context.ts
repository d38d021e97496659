// Who data is being written for, as custom encryption handlers see it: the authenticated user of the request, or
// the owner of the run being executed (its langgraph_auth_user). Set around a request's handler and a run's
// execution; storage reads it when it encrypts (decryption uses the context stored with each value).
import { AsyncLocalStorage } from "node:async_hooks";

const scope = new AsyncLocalStorage<{ user: unknown }>();

/** The user data is written for now; null outside a request or a run, or without custom auth. */
export function encryptionUser(): unknown {
  return scope.getStore()?.user ?? null;
}

/** Runs `fn` with `user` as the one data is written for. */
export function withEncryptionUser<T>(user: unknown, fn: () => T): T {
  return scope.run({ user }, fn);
}

/**
 * Makes `user` the one data is written for in the rest of the current execution and what it starts (called
 * synchronously just before a request's handler runs).
 */
export function enterEncryptionUser(user: unknown): void {
  scope.enterWith({ user });
}
