-- Authorizations (oi.authorization; seed 001's manifest "authorization"; docs/views-evidence.md): who authorised
-- what, granted or refused, at the record's time. One row per authorization id (the earliest copy).

CREATE OR REPLACE VIEW authorizations AS
SELECT attributes->>'otel_agent.authz.id' AS authorization_id,
       attributes->>'otel_agent.authz.by' AS authorized_by,
       attributes->>'otel_agent.authz.scope' AS scope,
       TRY_CAST(attributes->>'otel_agent.authz.granted' AS BOOLEAN) AS granted,
       attributes->>'otel_agent.authz.reason' AS reason,
       attributes->>'otel_agent.run.id' AS run_id,
       attributes->>'otel_agent.step.id' AS step_id,
       trace_id, span_id, service_name,
       start_time AS authorized_at
FROM spans
WHERE name = 'otel_agent.authorization' AND attributes->>'otel_agent.record.kind' = 'authorization'
  AND (attributes->>'otel_agent.authz.id') IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY authorization_id ORDER BY authorized_at, trace_id, span_id) = 1;
