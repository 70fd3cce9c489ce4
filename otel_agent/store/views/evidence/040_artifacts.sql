-- Artifacts and their versions (docs/views-evidence.md). Versions are only ever added: a regenerated artifact
-- has one more version, never a replaced one. Version numbers are derived in a deterministic order —
-- (recorded time, number the emitting handle gave, version id) — so they do not depend on arrival order.
-- A version's status comes from reviews: its latest approve/reject verdict, else draft.

CREATE OR REPLACE VIEW artifact_versions AS
WITH raw AS (
    SELECT a['otel_agent.artifact_version.id'] AS version_id,
           a['otel_agent.artifact.id'] AS artifact_id,
           a['otel_agent.artifact_version.number'] AS emitted_number,
           a['otel_agent.artifact_version.previous_id'] AS previous_version_id,
           a['otel_agent.artifact_version.content'] AS content,
           a['otel_agent.artifact_version.content_sha256'] AS content_sha256,
           a['otel_agent.artifact_version.source_step_id'] AS source_step_id,
           coalesce(a['otel_agent.artifact_version.evidence_ids'], []::VARCHAR[]) AS evidence_ids,
           * EXCLUDE (a) RENAME (recorded_at AS created_at)
    FROM oa_record_spans('otel_agent.artifact_version', 'artifact_version', '{
               "otel_agent.record.kind": "VARCHAR", "otel_agent.artifact.id": "VARCHAR",
               "otel_agent.artifact_version.id": "VARCHAR", "otel_agent.artifact_version.number": "BIGINT",
               "otel_agent.artifact_version.previous_id": "VARCHAR", "otel_agent.artifact_version.content": "VARCHAR",
               "otel_agent.artifact_version.content_sha256": "VARCHAR",
               "otel_agent.artifact_version.source_step_id": "VARCHAR",
               "otel_agent.artifact_version.evidence_ids": ["VARCHAR"],
               "otel_agent.run.id": "VARCHAR", "otel_agent.step.id": "VARCHAR"}')
    WHERE a['otel_agent.artifact_version.id'] IS NOT NULL AND a['otel_agent.artifact.id'] IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY version_id ORDER BY created_at, trace_id, span_id) = 1
),
numbered AS (
    SELECT *,
           row_number() OVER (PARTITION BY artifact_id
                              ORDER BY created_at, emitted_number NULLS LAST, version_id) AS version,
           count(*) OVER (PARTITION BY artifact_id) AS version_count
    FROM raw
)
SELECT n.version_id,
       n.artifact_id,
       n.version,
       n.version = n.version_count AS is_latest,
       CASE r.status WHEN 'approved' THEN 'approved' WHEN 'rejected' THEN 'rejected' ELSE 'draft' END AS status,
       r.reviewed_by, r.reviewed_at, r.review_reason,
       n.emitted_number,
       n.previous_version_id,
       n.content,
       n.content_sha256,
       n.source_step_id,
       n.evidence_ids,
       n.run_id, n.step_id, n.trace_id, n.span_id, n.service_name, n.created_at
FROM numbered n
LEFT JOIN oa_reviews_of('artifact_version') r ON r.target_id = n.version_id;

CREATE OR REPLACE VIEW artifacts AS
WITH containers AS (
    SELECT a['otel_agent.artifact.id'] AS artifact_id,
           a['otel_agent.artifact.type'] AS type,
           a['otel_agent.artifact.name'] AS name,
           * EXCLUDE (a) RENAME (recorded_at AS created_at)
    FROM oa_record_spans('otel_agent.artifact', 'artifact', '{
               "otel_agent.record.kind": "VARCHAR", "otel_agent.artifact.id": "VARCHAR",
               "otel_agent.artifact.type": "VARCHAR", "otel_agent.artifact.name": "VARCHAR",
               "otel_agent.run.id": "VARCHAR", "otel_agent.step.id": "VARCHAR"}')
    WHERE a['otel_agent.artifact.id'] IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY artifact_id ORDER BY created_at, trace_id, span_id) = 1
),
versions AS (
    SELECT artifact_id,
           count(*) AS versions,
           max(version) AS latest_version,
           arg_max(version_id, version) AS latest_version_id,
           arg_max(status, version) AS latest_status,
           max(version) FILTER (WHERE status = 'approved') AS latest_approved_version,
           arg_max(version_id, version) FILTER (WHERE status = 'approved') AS latest_approved_version_id,
           min(created_at) AS first_version_at,
           max(created_at) AS last_version_at,
           arg_min(run_id, version) AS first_version_run_id
    FROM artifact_versions
    GROUP BY artifact_id
)
SELECT coalesce(c.artifact_id, v.artifact_id) AS artifact_id,
       c.type,
       c.name,
       coalesce(c.run_id, v.first_version_run_id) AS run_id,
       coalesce(v.latest_status, 'draft') AS status,  -- created, no version yet: the seed's draft
       coalesce(v.versions, 0) AS versions,
       v.latest_version,
       v.latest_version_id,
       v.latest_approved_version,
       v.latest_approved_version_id,
       coalesce(c.created_at, v.first_version_at) AS created_at,
       v.last_version_at,
       c.step_id, c.trace_id, c.span_id, c.service_name
FROM containers c
FULL OUTER JOIN versions v ON v.artifact_id = c.artifact_id;
