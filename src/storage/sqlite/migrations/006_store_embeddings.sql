-- Version 6: embeddings of store items (a JSON array of vectors, one per indexed text) for semantic search.
ALTER TABLE store_items ADD COLUMN embedding TEXT;
