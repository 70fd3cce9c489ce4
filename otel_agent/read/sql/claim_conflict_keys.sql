-- claim_conflict_keys: how many stored conflict spans list the claim or any evidence it cites ($ids), found
-- through lineage_keys (a conflict span has a row under every claim and evidence id it lists, written at fold
-- time; store/views/evidence/005_lineage_keys.sql) by its index, without reading any span. 0: no conflict names
-- them, and the claim page skips claim_conflicts.sql, which reads every conflict span of the store. More than
-- 0 (or a hash collision) only means the page asks claim_conflicts.sql, which decides as before.
SELECT count(*) AS n
FROM lineage_keys
WHERE kind = 'conflict' AND key IN (SELECT lineage_key(unnest($ids::VARCHAR[])))
