-- Recoveries of handoff operations (oi.recover; seed 002: "record the authority, the maximum attempts, the cost
-- or time limit, and the evidence that will mark the recovery successful"; docs/views-evidence.md).
--
-- recovery_transitions: every recovery transition (started / attempt / succeeded / failed), a span stored twice
-- listed once. receipt_recoveries_at(as_of): one row per recovery as of a UTC time (transitions with time <=
-- as_of), the plan taken from its earliest `started`, whether a limit was exceeded and its status:
--   uncertain       no `started` recorded: the authority and limits are unknown
--   succeeded       a `succeeded`, or an `outcome_verified` receipt of the operation (trusted writer) at or
--                   after the start: the receipt itself is the success evidence
--   failed          a `failed` (the recovery gave up)
--   limit_exceeded  still open, and more attempts than allowed, attempts costing more than allowed, or past
--                   the time limit
--   running         otherwise
-- limit_exceeded / exceeded_limits hold whatever the status: a recovery that succeeded on its third attempt of
-- two allowed overstepped its authority, and the operator should see it.

CREATE OR REPLACE VIEW recovery_transitions AS
WITH parsed AS (
    SELECT json_extract_string(attributes, [
               '$."otel_agent.record.kind"', '$."otel_agent.recovery.id"', '$."otel_agent.recovery.transition"',
               '$."otel_agent.receipt.operation_id"', '$."otel_agent.receipt.handoff_id"',
               '$."otel_agent.recovery.mode"', '$."otel_agent.recovery.authority"', '$."otel_agent.recovery.action"',
               '$."otel_agent.recovery.trigger"', '$."otel_agent.recovery.max_attempts"',
               '$."otel_agent.recovery.max_cost_usd"', '$."otel_agent.recovery.time_limit_s"',
               '$."otel_agent.recovery.success_evidence"', '$."otel_agent.recovery.attempt"',
               '$."otel_agent.recovery.cost_usd"', '$."otel_agent.recovery.reason"',
               '$."otel_agent.recovery.evidence_ref"', '$."otel_agent.run.id"', '$."otel_agent.step.id"']) AS a,
           trace_id, span_id, service_name, start_time
    FROM spans
    -- name LIKE 'otel_agent.recovery.%', as a range DuckDB checks against the column's dictionary
    WHERE name >= 'otel_agent.recovery.' AND name < 'otel_agent.recovery/'
)
SELECT a[2] AS recovery_id, a[3] AS transition, a[4] AS operation_id, a[5] AS handoff_id, a[6] AS mode,
       a[7] AS authority, a[8] AS action, a[9] AS trigger, TRY_CAST(a[10] AS BIGINT) AS max_attempts,
       TRY_CAST(a[11] AS DOUBLE) AS max_cost_usd, TRY_CAST(a[12] AS DOUBLE) AS time_limit_s,
       a[13] AS success_evidence, TRY_CAST(a[14] AS BIGINT) AS attempt, TRY_CAST(a[15] AS DOUBLE) AS cost_usd,
       a[16] AS reason, a[17] AS evidence_ref, start_time AS time, a[18] AS run_id, a[19] AS step_id,
       service_name, trace_id, span_id
FROM parsed
WHERE a[1] = 'recovery' AND a[2] IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY start_time) = 1;

CREATE OR REPLACE MACRO receipt_recoveries_at(as_of) AS TABLE
WITH t AS (
    SELECT * FROM recovery_transitions WHERE time <= as_of
),
started AS (
    SELECT * FROM t WHERE transition = 'started'
    QUALIFY row_number() OVER (PARTITION BY recovery_id ORDER BY time, trace_id, span_id) = 1
),
agg AS (
    SELECT recovery_id,
           arg_min(operation_id, time) FILTER (WHERE operation_id IS NOT NULL) AS any_operation_id,
           count(*) FILTER (WHERE transition = 'attempt') AS attempts,
           fsum(cost_usd) FILTER (WHERE transition = 'attempt') AS cost_usd,
           max(time) FILTER (WHERE transition = 'attempt') AS last_attempt_at,
           arg_max(handoff_id, time) FILTER (WHERE transition = 'attempt' AND handoff_id IS NOT NULL)
               AS last_handoff_id,
           min(time) FILTER (WHERE transition = 'succeeded') AS succeeded_at,
           arg_min(evidence_ref, time) FILTER (WHERE transition = 'succeeded') AS evidence_ref,
           min(time) FILTER (WHERE transition = 'failed') AS failed_at,
           arg_min(reason, time) FILTER (WHERE transition = 'failed') AS failure_reason,
           min(time) AS first_transition_at,
           max(time) AS last_transition_at
    FROM t
    GROUP BY recovery_id
),
joined AS (
    SELECT a.*, coalesce(s.operation_id, a.any_operation_id) AS operation_id, s.handoff_id AS from_handoff_id,
           s.mode, s.authority, s.action, s.trigger, s.success_evidence, s.max_attempts, s.max_cost_usd,
           s.time_limit_s, s.time AS started_at,
           s.time + to_microseconds(CAST(s.time_limit_s * 1e6 AS BIGINT)) AS deadline,
           s.run_id, s.step_id, s.service_name, s.trace_id, s.span_id
    FROM agg a
    LEFT JOIN started s USING (recovery_id)
),
verified AS (
    SELECT j.recovery_id, min(r.time) AS operation_verified_at
    FROM joined j
    JOIN receipt_transitions r
      ON r.operation_id = j.operation_id AND r.transition = 'outcome_verified' AND r.trust <> 'untrusted'
     AND r.time >= coalesce(j.started_at, j.first_transition_at) AND r.time <= as_of
    GROUP BY ALL
),
judged AS (
    SELECT j.*, v.operation_verified_at,
           list_filter([
               CASE WHEN j.attempts > j.max_attempts THEN 'attempts' END,
               CASE WHEN j.cost_usd > j.max_cost_usd THEN 'cost_usd' END,
               CASE WHEN coalesce(least(j.succeeded_at, v.operation_verified_at, j.failed_at), as_of) > j.deadline
                    THEN 'time' END
           ], lambda x: x IS NOT NULL) AS exceeded_limits
    FROM joined j
    LEFT JOIN verified v USING (recovery_id)
)
SELECT recovery_id, operation_id,
       CASE
           WHEN started_at IS NULL THEN 'uncertain'
           WHEN succeeded_at IS NOT NULL OR operation_verified_at IS NOT NULL THEN 'succeeded'
           WHEN failed_at IS NOT NULL THEN 'failed'
           WHEN len(exceeded_limits) > 0 THEN 'limit_exceeded'
           ELSE 'running'
       END AS status,
       len(exceeded_limits) > 0 AS limit_exceeded, exceeded_limits,
       mode, authority, action, trigger, success_evidence,
       max_attempts, attempts, max_cost_usd, cost_usd, time_limit_s, deadline,
       from_handoff_id, last_handoff_id,
       started_at, last_attempt_at, succeeded_at, evidence_ref, operation_verified_at, failed_at, failure_reason,
       last_transition_at, run_id, step_id, service_name, trace_id, span_id,
       CAST(as_of AS TIMESTAMP_NS) AS evaluated_at
FROM judged;

CREATE OR REPLACE VIEW receipt_recoveries AS
SELECT * EXCLUDE (evaluated_at) FROM receipt_recoveries_at(timezone('UTC', now()));
