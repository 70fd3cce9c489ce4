-- artifact_versions: every version of one artifact, in number order, with content for the diff.
SELECT version_id, artifact_id, version, is_latest, status, reviewed_by, reviewed_at, review_reason,
       previous_version_id, content, content_sha256, source_step_id, evidence_ids, run_id, step_id, trace_id,
       span_id, service_name, created_at
FROM artifact_versions
WHERE artifact_id = $artifact_id
ORDER BY version
LIMIT 500
