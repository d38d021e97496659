// The control plane console's hash routes (`#/deployments/<id>`, `#/new`, `#/listeners`): static files, so every
// view is a URL the server need not know.
import { useEffect, useState } from "react";

export const CP_PAGES = ["deployments", "new", "listeners"] as const;
export type CpPage = (typeof CP_PAGES)[number];
export type CpRoute = { page: CpPage; id?: string };

export function parseCpRoute(hash: string): CpRoute {
  const [page, id] = hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const known = CP_PAGES.find((p) => p === page);
  return { page: known ?? "deployments", id: (known && id) || undefined };
}

export const cpHref = (r: CpRoute): string => `#/${r.page}${r.id ? `/${encodeURIComponent(r.id)}` : ""}`;

export function useCpRoute(): CpRoute {
  const [route, setRoute] = useState(() => parseCpRoute(location.hash));
  useEffect(() => {
    const onHash = () => setRoute(parseCpRoute(location.hash));
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  return route;
}
