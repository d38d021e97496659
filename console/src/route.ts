// Hash routes (`#/threads/<id>`): the console is static files, so every view is a URL the server need not know.
import { useEffect, useState } from "react";

export const PAGES = ["assistants", "threads", "store", "crons", "metrics"] as const;
export type Page = (typeof PAGES)[number];
export type Route = { page: Page; id?: string };

export function parseRoute(hash: string): Route {
  const [page, id] = hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const known = PAGES.find((p) => p === page);
  return { page: known ?? "assistants", id: id || undefined };
}

export const href = (r: Route): string => `#/${r.page}${r.id ? `/${encodeURIComponent(r.id)}` : ""}`;

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash));
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  return route;
}
