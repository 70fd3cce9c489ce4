-- write_marks: how many rows the product's own append-only tables hold (reviews, writer trust). Written through
-- the writer's run_write, they do not count as the receiver's commits (the console's generation), so a page's
-- cached results (console/store.py ResultCache) are reused only while these are unchanged too.
SELECT (SELECT count(*) FROM reviews) AS reviews, (SELECT count(*) FROM trusted_writers) AS trust_changes
