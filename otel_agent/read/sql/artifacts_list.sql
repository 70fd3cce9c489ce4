-- artifacts_list: one page of the Artifacts page (console/pages/artifacts.py), latest first.
SELECT artifact_id, type, name, run_id, status, versions, latest_version, latest_version_id,
       latest_approved_version, created_at, last_version_at, service_name
FROM artifacts
WHERE ($text IS NULL OR contains(lower(artifact_id), lower($text)) OR contains(lower(coalesce(name, '')), lower($text)))
ORDER BY last_version_at DESC NULLS LAST, artifact_id
LIMIT $limit OFFSET $offset
