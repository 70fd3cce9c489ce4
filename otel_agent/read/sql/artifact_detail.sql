-- artifact_detail: one artifact's row (artifacts view).
SELECT * FROM artifacts WHERE artifact_id = $artifact_id
