-- Authorizations (oi.authorization; seed 001's manifest "authorization"; docs/views-evidence.md): who authorised
-- what, granted or refused, at the record's time. One row per authorization id (the earliest copy).

CREATE OR REPLACE VIEW authorizations AS
SELECT a['otel_agent.authz.id'] AS authorization_id,
       a['otel_agent.authz.by'] AS authorized_by,
       a['otel_agent.authz.scope'] AS scope,
       TRY_CAST(a['otel_agent.authz.granted'] AS BOOLEAN) AS granted,
       a['otel_agent.authz.reason'] AS reason,
       * EXCLUDE (a, recorded_at), recorded_at AS authorized_at
FROM oa_record_spans('otel_agent.authorization', 'authorization', '{
               "otel_agent.record.kind": "VARCHAR", "otel_agent.authz.id": "VARCHAR", "otel_agent.authz.by": "VARCHAR",
               "otel_agent.authz.scope": "VARCHAR", "otel_agent.authz.granted": "VARCHAR",
               "otel_agent.authz.reason": "VARCHAR", "otel_agent.run.id": "VARCHAR", "otel_agent.step.id": "VARCHAR"}')
WHERE a['otel_agent.authz.id'] IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY authorization_id ORDER BY authorized_at, trace_id, span_id) = 1;
