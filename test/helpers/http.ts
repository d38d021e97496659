// Helpers for end-to-end tests: raw JSON requests, HTTP error capture and unique names.
import { randomUUID } from "node:crypto";
import { expect } from "vitest";

/** A name unique to this run: `prefix-<uuid>`. */
export function unique(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

/** Awaits a request that must fail; returns its HTTP status and parsed JSON body. */
export async function httpError(p: Promise<unknown>): Promise<{ status: number; body: any }> {
  let err: any;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  expect(err, "request should have failed").toBeDefined();
  expect(typeof err.status, `expected an HTTP error, got ${String(err)}`).toBe("number");
  let body: any;
  try {
    body = JSON.parse(err.text);
  } catch {
    throw new Error(`error body is not JSON: ${err.text}`);
  }
  return { status: err.status, body };
}

/** Reads a response: status, headers and the body parsed as JSON (the raw text where it is not JSON). */
async function readJson(res: Response): Promise<{ status: number; headers: Headers; body: any }> {
  const text = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** POSTs JSON and returns status, headers and the parsed JSON body. */
export async function postJson(
  baseUrl: string,
  path: string,
  body: unknown,
  method = "POST",
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(new URL(path, baseUrl), {
    method,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return readJson(res);
}

/** GETs `baseUrl + path` and returns status, headers and the parsed JSON body. */
export async function getJson(
  baseUrl: string,
  path: string,
): Promise<{ status: number; headers: Headers; body: any }> {
  return readJson(await fetch(new URL(path, baseUrl)));
}
