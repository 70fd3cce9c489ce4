-- Handoff receipts (seed 002; docs/views-evidence.md): every transition ever received, and the operator
-- state of each handoff attempt and each operation as of any time.
--
-- Time is event time (the transition span's start), never arrival time, so a state does not depend on the
-- order or number of deliveries. States: verified, orphaned, working, waiting, stuck, outcome_failed,
-- uncertain (rules in docs/views-evidence.md). Windows are macro parameters; the views use the defaults.

-- '2026-01-01T10:00:00.000Z' for a TIMESTAMP[_NS] in UTC.
CREATE OR REPLACE MACRO receipt_ts(x) AS strftime(x::TIMESTAMP, '%Y-%m-%dT%H:%M:%S.%gZ');

CREATE OR REPLACE VIEW receipt_transitions AS
WITH raw AS (
    SELECT attributes->>'otel_agent.receipt.operation_id' AS operation_id,
           attributes->>'otel_agent.receipt.handoff_id' AS handoff_id,
           attributes->>'otel_agent.receipt.transition' AS transition,
           start_time AS time,
           attributes->>'otel_agent.receipt.expected_artifact' AS expected_artifact,
           attributes->>'otel_agent.receipt.reason' AS reason,
           attributes->>'otel_agent.receipt.waiting_for' AS waiting_for,
           attributes->>'otel_agent.receipt.target' AS target,
           attributes->>'otel_agent.receipt.artifact_ref' AS artifact_ref,
           attributes->>'otel_agent.run.id' AS run_id,
           attributes->>'otel_agent.step.id' AS step_id,
           trace_id, span_id, kind AS span_kind, service_name, principal, received_at, end_time
    FROM spans
    WHERE name LIKE 'otel_agent.receipt.%'
      AND attributes->>'otel_agent.record.kind' = 'receipt_transition'
),
dedup AS (
    -- A span stored twice (same ids, different end time) is one transition.
    SELECT * FROM raw
    QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time) = 1
),
mapping AS (
    SELECT principal, list(service_name) AS services
    FROM writer_trust
    WHERE trusted
    GROUP BY principal
)
SELECT r.operation_id,
       r.handoff_id,
       r.transition,
       CASE r.transition
           WHEN 'delegated' THEN 0
           WHEN 'accepted' THEN 1
           WHEN 'progress' THEN 2
           WHEN 'waiting' THEN 2
           WHEN 'completed' THEN 3
           WHEN 'outcome_verified' THEN 4
           WHEN 'outcome_failed' THEN 4
       END AS transition_order,
       r.time,
       r.expected_artifact,
       r.reason,
       r.waiting_for,
       r.target,
       r.artifact_ref,
       r.service_name,
       r.principal,
       CASE
           WHEN r.principal IS NULL THEN 'unchecked'
           WHEN m.services IS NOT NULL THEN
               CASE WHEN list_contains(m.services, r.service_name) OR list_contains(m.services, '*')
                    THEN 'trusted' ELSE 'untrusted' END
           WHEN r.principal = r.service_name THEN 'trusted'
           ELSE 'untrusted'
       END AS trust,
       r.run_id,
       r.step_id,
       r.trace_id,
       r.span_id,
       r.span_kind,
       r.received_at
FROM dedup r
LEFT JOIN mapping m ON m.principal = r.principal;

-- One row per handoff attempt (operation id, handoff id), evaluated with the transitions whose time <= as_of.
CREATE OR REPLACE MACRO receipt_attempts_at(
    as_of,
    ack_window := INTERVAL 120 SECOND,
    progress_window := INTERVAL 15 MINUTE,
    verification_window := INTERVAL 15 MINUTE,
    clock_skew := INTERVAL 5 SECOND
) AS TABLE
WITH t AS (
    SELECT *
    FROM receipt_transitions
    WHERE time <= CAST(as_of AS TIMESTAMP_NS) AND operation_id IS NOT NULL AND handoff_id IS NOT NULL
),
a AS (
    SELECT operation_id,
           handoff_id,
           count(*) AS transitions,
           min(time) AS first_transition_at,
           max(time) AS last_transition_at,
           arg_max(transition, (time, transition_order, transition)) AS last_transition,
           min(time) FILTER (WHERE transition = 'delegated') AS delegated_at,
           arg_min(service_name, (time, service_name)) FILTER (WHERE transition = 'delegated') AS delegator,
           arg_min(target, (time, target)) FILTER (WHERE transition = 'delegated') AS target,
           min(expected_artifact) FILTER (WHERE transition = 'delegated') AS delegated_artifact,
           min(expected_artifact) AS min_artifact,
           max(expected_artifact) AS max_artifact,
           min(time) FILTER (WHERE transition = 'accepted') AS accepted_at,
           min(service_name) FILTER (WHERE transition = 'accepted') AS min_acceptor,
           max(service_name) FILTER (WHERE transition = 'accepted') AS max_acceptor,
           max(time) FILTER (WHERE transition IN ('accepted', 'progress')) AS last_progress_at,
           max(time) FILTER (WHERE transition = 'progress') AS last_progress_only_at,
           max(time) FILTER (WHERE transition = 'waiting') AS last_waiting_at,
           arg_max(waiting_for, (time, waiting_for)) FILTER (WHERE transition = 'waiting') AS waiting_dependency,
           min(time) FILTER (WHERE transition = 'completed') AS completed_at,
           arg_min(artifact_ref, (time, artifact_ref)) FILTER (WHERE transition = 'completed') AS artifact_ref,
           max(time) FILTER (WHERE transition = 'outcome_verified') AS verified_at,
           max(time) FILTER (WHERE transition = 'outcome_failed') AS failed_at,
           arg_max(reason, (time, reason)) FILTER (WHERE transition = 'outcome_failed') AS failure_reason,
           count(*) FILTER (WHERE trust = 'untrusted') AS untrusted_transitions,
           min(service_name || ' as principal ' || principal) FILTER (WHERE trust = 'untrusted') AS untrusted_writer,
           count(*) FILTER (WHERE transition_order IS NULL) AS unrecognised_transitions
    FROM t
    GROUP BY operation_id, handoff_id
),
checked AS (
    SELECT *,
           CAST(as_of AS TIMESTAMP_NS) AS evaluated_at,
           CASE
               WHEN untrusted_transitions > 0 THEN
                   untrusted_transitions || ' transition(s) from an untrusted writer (' || untrusted_writer || ')'
               WHEN unrecognised_transitions > 0 THEN
                   unrecognised_transitions || ' transition(s) of an unknown type'
               WHEN min_acceptor <> max_acceptor THEN
                   'accepted by more than one service (' || min_acceptor || ', ' || max_acceptor || ')'
               WHEN delegated_at IS NULL THEN
                   last_transition || ' recorded but no delegation of this handoff'
               WHEN accepted_at IS NULL AND coalesce(completed_at, verified_at, failed_at) IS NOT NULL THEN
                   'completed or verified without acceptance'
               WHEN accepted_at IS NULL
                    AND coalesce(last_progress_only_at, last_waiting_at) IS NOT NULL THEN
                   'progress or waiting recorded without acceptance'
               WHEN accepted_at < delegated_at - clock_skew THEN
                   'accepted at ' || receipt_ts(accepted_at) || ', before its delegation at ' || receipt_ts(delegated_at)
               WHEN completed_at < accepted_at - clock_skew THEN
                   'completed at ' || receipt_ts(completed_at) || ', before its acceptance at ' || receipt_ts(accepted_at)
               WHEN min_artifact <> max_artifact THEN
                   'expected artifact differs between transitions (' || min_artifact || ', ' || max_artifact || ')'
               WHEN verified_at = failed_at THEN
                   'verified and failed at the same time'
           END AS contradiction
    FROM a
)
SELECT operation_id,
       handoff_id,
       CASE
           WHEN contradiction IS NOT NULL THEN 'uncertain'
           WHEN verified_at IS NOT NULL AND (failed_at IS NULL OR verified_at > failed_at) THEN 'verified'
           WHEN failed_at IS NOT NULL THEN 'outcome_failed'
           WHEN completed_at IS NOT NULL AND evaluated_at - completed_at > verification_window THEN 'outcome_failed'
           WHEN completed_at IS NOT NULL THEN 'waiting'
           WHEN accepted_at IS NULL AND evaluated_at - delegated_at > ack_window THEN 'orphaned'
           WHEN accepted_at IS NULL THEN 'waiting'
           WHEN last_waiting_at >= last_progress_at THEN 'waiting'
           WHEN evaluated_at - last_progress_at <= progress_window THEN 'working'
           ELSE 'stuck'
       END AS state,
       CASE
           WHEN contradiction IS NOT NULL THEN contradiction
           WHEN verified_at IS NOT NULL AND (failed_at IS NULL OR verified_at > failed_at) THEN
               'outcome verified at ' || receipt_ts(verified_at)
           WHEN failed_at IS NOT NULL THEN
               'verification failed at ' || receipt_ts(failed_at) || coalesce(': ' || failure_reason, '')
           WHEN completed_at IS NOT NULL AND evaluated_at - completed_at > verification_window THEN
               'completed at ' || receipt_ts(completed_at) || ', no verification within ' || verification_window
           WHEN completed_at IS NOT NULL THEN
               'completed at ' || receipt_ts(completed_at) || ', verification window open until '
               || receipt_ts(completed_at + verification_window)
           WHEN accepted_at IS NULL AND evaluated_at - delegated_at > ack_window THEN
               'delegated at ' || receipt_ts(delegated_at) || ', not accepted within ' || ack_window
           WHEN accepted_at IS NULL THEN
               'delegated at ' || receipt_ts(delegated_at) || ', acknowledgement window open until '
               || receipt_ts(delegated_at + ack_window)
           WHEN last_waiting_at >= last_progress_at THEN
               'waiting for ' || coalesce(waiting_dependency, '?') || ' since ' || receipt_ts(last_waiting_at)
           WHEN evaluated_at - last_progress_at <= progress_window THEN
               'last progress at ' || receipt_ts(last_progress_at) || ', within ' || progress_window
           ELSE
               'accepted, not waiting, no progress since ' || receipt_ts(last_progress_at)
               || ' (window ' || progress_window || ')'
       END AS why,
       CASE
           WHEN contradiction IS NOT NULL THEN NULL
           WHEN verified_at IS NOT NULL OR failed_at IS NOT NULL THEN NULL
           WHEN completed_at IS NOT NULL AND evaluated_at - completed_at <= verification_window THEN 'verification'
           WHEN completed_at IS NOT NULL THEN NULL
           WHEN accepted_at IS NULL AND evaluated_at - delegated_at <= ack_window THEN 'acknowledgement'
           WHEN accepted_at IS NOT NULL AND last_waiting_at >= last_progress_at THEN waiting_dependency
       END AS waiting_for,
       accepted_at - delegated_at AS ack_latency,
       epoch_ns(accepted_at - delegated_at) / 1e9 AS ack_latency_s,
       coalesce(delegated_artifact, min_artifact) AS expected_artifact,
       delegator,
       target,
       CASE WHEN min_acceptor IS NULL THEN []::VARCHAR[]
            WHEN min_acceptor = max_acceptor THEN [min_acceptor]
            ELSE [min_acceptor, max_acceptor] END AS acceptors,
       artifact_ref,
       delegated_at,
       accepted_at,
       last_progress_at,
       last_waiting_at,
       completed_at,
       verified_at,
       failed_at,
       failure_reason,
       first_transition_at,
       last_transition_at,
       last_transition,
       transitions,
       untrusted_transitions,
       evaluated_at
FROM checked;

-- One row per operation: its latest attempt's state, except that an untrusted writer anywhere makes the
-- operation uncertain and a verified attempt anywhere makes it verified.
CREATE OR REPLACE MACRO receipt_state_at(
    as_of,
    ack_window := INTERVAL 120 SECOND,
    progress_window := INTERVAL 15 MINUTE,
    verification_window := INTERVAL 15 MINUTE,
    clock_skew := INTERVAL 5 SECOND
) AS TABLE
WITH att AS (
    SELECT *,
           row_number() OVER (PARTITION BY operation_id
                              ORDER BY coalesce(delegated_at, first_transition_at) DESC, handoff_id DESC) AS recency
    FROM receipt_attempts_at(as_of, ack_window := ack_window, progress_window := progress_window,
                             verification_window := verification_window, clock_skew := clock_skew)
),
ops AS (
    SELECT operation_id,
           count(*) AS attempts,
           list(handoff_id ORDER BY recency DESC) AS handoff_ids,
           sum(untrusted_transitions) AS untrusted_transitions,
           arg_min(handoff_id || ': ' || why, recency) FILTER (WHERE untrusted_transitions > 0) AS untrusted_why,
           arg_min(handoff_id || ': ' || why, recency) FILTER (WHERE state = 'verified') AS verified_why,
           sum(transitions) AS transitions,
           max(last_transition_at) AS last_transition_at
    FROM att
    GROUP BY operation_id
)
SELECT o.operation_id,
       CASE WHEN o.untrusted_transitions > 0 THEN 'uncertain'
            WHEN o.verified_why IS NOT NULL THEN 'verified'
            ELSE c.state END AS state,
       CASE WHEN o.untrusted_transitions > 0 THEN 'attempt ' || o.untrusted_why
            WHEN o.verified_why IS NOT NULL AND c.state <> 'verified' THEN 'attempt ' || o.verified_why
            ELSE c.why END AS why,
       c.waiting_for,
       c.ack_latency,
       c.ack_latency_s,
       c.handoff_id AS current_handoff_id,
       c.state AS current_attempt_state,
       o.attempts,
       o.handoff_ids,
       c.expected_artifact,
       c.delegator,
       c.target,
       c.acceptors,
       c.artifact_ref,
       c.delegated_at,
       c.accepted_at,
       c.last_progress_at,
       c.completed_at,
       c.verified_at,
       c.failed_at,
       o.last_transition_at,
       o.transitions,
       o.untrusted_transitions,
       c.evaluated_at
FROM ops o
JOIN att c ON c.operation_id = o.operation_id AND c.recency = 1;

-- As of now, with the default windows. (No evaluated_at column: a view's rows depend only on the data.)
CREATE OR REPLACE VIEW receipt_attempts AS
SELECT * EXCLUDE (evaluated_at) FROM receipt_attempts_at(timezone('UTC', now()));

CREATE OR REPLACE VIEW receipt_state AS
SELECT * EXCLUDE (evaluated_at) FROM receipt_state_at(timezone('UTC', now()));
