-- Version 5: a run's admission and a run's end each in one round trip. Each was a transaction of several
-- statements sent one by one (BEGIN, the thread's row lock, a read, a write, COMMIT); here each is one call of a
-- function that does the same steps in the same order. Every statement of a volatile function takes its own
-- snapshot (READ COMMITTED), so what is read after the lock sees whatever committed before the lock was granted,
-- exactly as a separate statement did.

-- Admits a run on a thread (PostgresRuns.admit): under the thread's row lock, reads the thread's active runs
-- (running first, then in the order they start; `delayed`: still waiting for after_seconds), and unless the
-- thread is busy under "reject" (any active run: a delayed one makes the thread busy, as threadLine in
-- storage/admission.ts reads it), records the run, first in line under "interrupt" or "rollback" when the thread
-- has a current run, and marks the thread busy with the given metadata merged and the given config (when
-- p_thread_metadata is not null). Returns {"active": [{run_id, delayed}], "admitted": bool}.
CREATE FUNCTION admit_run(
  p_run_id UUID, p_thread_id UUID, p_assistant_id UUID, p_ts TIMESTAMPTZ, p_status TEXT, p_metadata JSONB,
  p_kwargs JSONB, p_strategy TEXT, p_delay DOUBLE PRECISION, p_thread_metadata JSONB, p_thread_config JSONB)
RETURNS JSONB
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
  active JSONB;
  has_current BOOLEAN;
BEGIN
  PERFORM 1 FROM threads WHERE thread_id = p_thread_id FOR UPDATE;
  SELECT COALESCE(jsonb_agg(jsonb_build_object('run_id', a.run_id, 'delayed', a.delayed)
           ORDER BY a.running DESC, a.priority DESC, a.seq), '[]'::jsonb),
         COALESCE(bool_or(NOT a.delayed), false)
    INTO active, has_current
    FROM (SELECT r.run_id, r.status = 'running' AS running, r.priority, r.seq,
            (r.status = 'pending' AND r.not_before IS NOT NULL AND r.not_before > now()) AS delayed
          FROM runs r WHERE r.thread_id = p_thread_id AND r.status IN ('pending', 'running')) a;
  IF p_strategy = 'reject' AND jsonb_array_length(active) > 0 THEN
    RETURN jsonb_build_object('active', active, 'admitted', false);
  END IF;
  INSERT INTO runs (run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs,
    multitask_strategy, not_before, priority)
  VALUES (p_run_id, p_thread_id, p_assistant_id, p_ts, p_ts, p_status, p_metadata, p_kwargs, p_strategy,
    CASE WHEN p_delay > 0 THEN now() + make_interval(secs => p_delay) END,
    CASE WHEN has_current AND p_strategy IN ('interrupt', 'rollback') THEN 1 ELSE 0 END);
  IF p_thread_metadata IS NOT NULL THEN
    UPDATE threads SET status = 'busy', updated_at = p_ts, metadata = metadata || p_thread_metadata,
      config = p_thread_config
    WHERE thread_id = p_thread_id;
  END IF;
  RETURN jsonb_build_object('active', active, 'admitted', true);
END
$$;

-- Records a run's end on its thread (PostgresThreads.setState with busyWhilePending): under the thread's row lock,
-- with the run's attempt as a fence (p_run_id not null: nothing is written unless the run is still at that
-- attempt; p_run_status not null: the run's status is set too), then the thread's fields given in p_set (keys
-- status, values, interrupts, error, metadata, config; a JSON null value or error is stored as NULL). The status
-- stays busy while another run of the thread is pending, read after the lock: a pending run cancelled at this
-- moment (PgRunQueue.requestCancel, under the same lock) is seen either cancelled here, or its canceller sees this
-- run ended and settles the thread. Returns the thread's status (NULL: nothing recorded), and whether the call
-- wrote (it has a transaction id, so its synchronous commit flushed the WAL up to here: see WalFlusher).
CREATE FUNCTION end_run(
  p_thread_id UUID, p_ts TIMESTAMPTZ, p_set JSONB, p_run_id UUID, p_attempt INTEGER, p_run_status TEXT,
  OUT thread_status TEXT, OUT wrote BOOLEAN)
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
BEGIN
  PERFORM 1 FROM threads t WHERE t.thread_id = p_thread_id FOR UPDATE;
  wrote := txid_current_if_assigned() IS NOT NULL;
  IF p_run_id IS NOT NULL THEN
    IF p_run_status IS NOT NULL THEN
      UPDATE runs r SET status = p_run_status, updated_at = p_ts WHERE r.run_id = p_run_id AND r.attempt = p_attempt;
    ELSE
      PERFORM 1 FROM runs r WHERE r.run_id = p_run_id AND r.attempt = p_attempt;
    END IF;
    IF NOT FOUND THEN
      RETURN;
    END IF;
  END IF;
  UPDATE threads t SET updated_at = p_ts,
    status = CASE
      WHEN NOT p_set ? 'status' THEN t.status
      WHEN EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = p_thread_id AND r.status = 'pending') THEN 'busy'
      ELSE p_set ->> 'status' END,
    "values" = CASE WHEN p_set ? 'values' THEN NULLIF(p_set -> 'values', 'null'::jsonb) ELSE t."values" END,
    state_updated_at = CASE WHEN p_set ? 'values' THEN p_ts ELSE t.state_updated_at END,
    interrupts = CASE WHEN p_set ? 'interrupts' THEN p_set -> 'interrupts' ELSE t.interrupts END,
    error = CASE WHEN p_set ? 'error' THEN NULLIF(p_set -> 'error', 'null'::jsonb) ELSE t.error END,
    metadata = CASE WHEN p_set ? 'metadata' THEN t.metadata || (p_set -> 'metadata') ELSE t.metadata END,
    config = CASE WHEN p_set ? 'config' THEN p_set -> 'config' ELSE t.config END
  WHERE t.thread_id = p_thread_id
  RETURNING t.status INTO thread_status;
  wrote := txid_current_if_assigned() IS NOT NULL;
END
$$;
