-- Version 2: what the PostgreSQL run queue needs beyond version 1. Runs are taken in (priority, seq) order,
-- one at a time per thread; a cancellation asked for on any process is recorded on the run, so the worker
-- holding it sees it on its next heartbeat even if the broker's signal was lost.
ALTER TABLE runs ADD COLUMN seq BIGSERIAL;
ALTER TABLE runs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN cancel_action TEXT;
DROP INDEX runs_pending;
CREATE INDEX runs_queue ON runs (priority DESC, seq) WHERE status = 'pending';
CREATE INDEX runs_thread_status ON runs (thread_id, status);

-- Takes up to p_limit runs for a worker: pending runs in (priority, seq) order, at most one per thread and
-- only a thread's first in line, never a thread with a running run. Each candidate's thread is checked under
-- a transaction advisory lock and with a fresh snapshot (each statement of a volatile function sees what
-- other transactions committed), so two workers never start two runs of one thread.
CREATE FUNCTION claim_runs(p_worker TEXT, p_lease_ms INTEGER, p_limit INTEGER)
RETURNS SETOF runs
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
  cand RECORD;
  taken INTEGER := 0;
BEGIN
  FOR cand IN
    SELECT r.run_id, r.thread_id, r.priority, r.seq FROM runs r
    WHERE r.status = 'pending' AND (r.not_before IS NULL OR r.not_before <= now())
    ORDER BY r.priority DESC, r.seq
    LIMIT p_limit * 4
    FOR UPDATE SKIP LOCKED
  LOOP
    EXIT WHEN taken >= p_limit;
    IF cand.thread_id IS NOT NULL THEN
      CONTINUE WHEN NOT pg_try_advisory_xact_lock(1213351495, hashtext(cand.thread_id::text));
      CONTINUE WHEN EXISTS (
        SELECT 1 FROM runs x
        WHERE x.thread_id = cand.thread_id AND x.run_id <> cand.run_id
          AND (x.status = 'running'
            OR (x.status = 'pending' AND (x.not_before IS NULL OR x.not_before <= now())
              AND (x.priority > cand.priority OR (x.priority = cand.priority AND x.seq < cand.seq)))));
    END IF;
    RETURN QUERY
      UPDATE runs SET status = 'running', worker_id = p_worker, updated_at = now(),
        lease_expires_at = now() + make_interval(secs => p_lease_ms / 1000.0)
      WHERE run_id = cand.run_id
      RETURNING *;
    taken := taken + 1;
  END LOOP;
END
$$;
