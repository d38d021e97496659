-- Version 7: when a delayed run (after_seconds) becomes due. Until then it does not hold its thread, so the
-- atomic admission of a new run (the busy check and the insert in one transaction) leaves it out.
ALTER TABLE runs ADD COLUMN not_before TEXT;
