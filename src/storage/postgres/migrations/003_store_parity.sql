-- Version 3: what the stores need to behave as the embedded ones do. Insertion order breaks ties when
-- sorting (SQLite's rowid; runs got theirs in version 2), and JSON merge patch (RFC 7396, SQLite's
-- json_patch) merges metadata: nested objects merge, a null removes the key.
ALTER TABLE assistants ADD COLUMN seq BIGSERIAL;
ALTER TABLE threads ADD COLUMN seq BIGSERIAL;
ALTER TABLE crons ADD COLUMN seq BIGSERIAL;

-- The function calls itself; SET search_path FROM CURRENT resolves that call in this schema.
CREATE FUNCTION json_merge_patch(target JSONB, patch JSONB) RETURNS JSONB
LANGUAGE plpgsql IMMUTABLE SET search_path FROM CURRENT AS $$
DECLARE
  result JSONB;
  k TEXT;
  v JSONB;
BEGIN
  IF patch IS NULL OR jsonb_typeof(patch) <> 'object' THEN
    RETURN patch;
  END IF;
  IF target IS NULL OR jsonb_typeof(target) <> 'object' THEN
    result := '{}'::JSONB;
  ELSE
    result := target;
  END IF;
  FOR k, v IN SELECT key, value FROM jsonb_each(patch) LOOP
    IF jsonb_typeof(v) = 'null' THEN
      result := result - k;
    ELSE
      result := result || jsonb_build_object(k, json_merge_patch(result -> k, v));
    END IF;
  END LOOP;
  RETURN result;
END
$$;
