// A revision's build or deploy log (POST /v1/projects/{deployment}/revisions/{revision}/{build|deploy}_logs),
// read page by page from where it stopped: followed every 1.5 s while the revision is on its way (the new lines
// appended), once more when it got there, then on demand.
import { useEffect, useRef, useState } from "react";
import { errorText } from "../load.ts";
import { statusOf, type CpApi, type LogLine } from "./api.ts";

const PAGE = 1000;
const EVERY_MS = 1500;

export function LogView({
  api,
  deploymentId,
  revisionId,
  kind,
  live,
}: {
  api: CpApi;
  deploymentId: string;
  revisionId: string;
  kind: "build" | "deploy";
  live: boolean;
}) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [error, setError] = useState<string | undefined>();
  const [following, setFollowing] = useState(false);
  const [more, setMore] = useState(0);
  const offset = useRef(0);
  const liveRef = useRef(live);
  const wake = useRef<() => void>(() => {});
  liveRef.current = live;

  // Another revision (or log): start from its first line.
  useEffect(() => {
    offset.current = 0;
    setLines([]);
    setError(undefined);
  }, [api, deploymentId, revisionId, kind]);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // A read running or the next one scheduled.
    let active = false;
    const path = `/v1/projects/${deploymentId}/revisions/${revisionId}/${kind}_logs`;
    const tick = async () => {
      active = true;
      // Whether to come back is judged before the read: the read after the revision got there is the last one.
      let wasLive = liveRef.current;
      setFollowing(wasLive);
      try {
        for (;;) {
          const page = await api<{ logs: LogLine[]; offset: number }>("POST", path, {
            offset: offset.current,
            limit: PAGE,
            order: "asc",
          });
          if (stopped) return;
          offset.current = page.offset;
          if (page.logs.length) setLines((l) => [...l, ...page.logs]);
          if (page.logs.length < PAGE) break;
        }
        setError(undefined);
      } catch (e) {
        if (stopped) return;
        setError(errorText(e));
        // A refusal (4xx: the key, a deleted deployment) ends the follow; the network or a 5xx may come back.
        const status = statusOf(e);
        if (status !== undefined && status < 500) wasLive = false;
      }
      if (stopped) return;
      if (wasLive) timer = setTimeout(() => void tick(), EVERY_MS);
      else {
        active = false;
        setFollowing(false);
      }
    };
    // The revision getting on its way again (a live flag turning on) restarts a stopped follow.
    wake.current = () => {
      if (!active) void tick();
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [api, deploymentId, revisionId, kind, more]);

  // Turned live while stopped (e.g. a redeploy of the same revision): follow again.
  useEffect(() => {
    if (live && !following) wake.current();
  }, [live, following]);

  return (
    <div className="log-box">
      <div role="log" aria-label={`${kind} log`} className="log">
        {lines.map((l, i) => (
          <div key={i} className={`line ${l.level.toLowerCase()}`} data-testid={`${kind}-log-line`}>
            <span className="muted">{new Date(l.timestamp).toLocaleTimeString()}</span>{" "}
            <span className="level">{l.level}</span> {l.message}
          </div>
        ))}
        {lines.length === 0 && <div className="muted">{following ? "Waiting for lines…" : "No lines."}</div>}
      </div>
      {error && <p className="error">{error}</p>}
      <p className="muted">
        {following ? (
          "Following…"
        ) : (
          <button className="link" onClick={() => setMore((n) => n + 1)}>
            Load new lines
          </button>
        )}
      </p>
    </div>
  );
}
