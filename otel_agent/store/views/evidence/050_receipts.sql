-- Handoff receipts (seed 002; docs/views-evidence.md): every transition ever received, and the operator
-- state of each handoff attempt and each operation as of any time.
--
-- Time is event time (the transition span's start), never arrival time, so a state does not depend on the
-- order or number of deliveries. States: verified, orphaned, working, waiting, stuck, outcome_failed,
-- uncertain (rules in docs/views-evidence.md). Windows are macro parameters; the views use the defaults.

-- '2026-01-01T10:00:00.000Z' for a TIMESTAMP[_NS] in UTC.
CREATE OR REPLACE MACRO receipt_ts(x) AS strftime(x::TIMESTAMP, '%Y-%m-%dT%H:%M:%S.%gZ');

-- One row per stored receipt span (internal). The JSON is parsed once (json_extract_string with a list of paths)
-- and nothing filters on parsed values here: DuckDB would evaluate the parse again inside a pushed-down filter.
-- A span stored twice (same ids, another end time) appears twice: receipt_transitions keeps one, and the state
-- macros use aggregates a duplicate cannot change (min, max, latest-by-time), apart from counts of spans.
--
-- Third-party spans map onto the same transitions (source 'a2a' or 'handoff_span'; ours are 'otel_agent'):
--   A2A spans with a2a.task.id and a2a.task.state (operation and handoff id = the task id): the task's first
--     span is its delegation (at its start); its acceptance (at its start) is the first span in a state past
--     submitted (a rejection is an answer too: acknowledged, then failed) of a service other than the
--     delegating span's when there is one — the remote agent's own record: a delegator does not accept its own
--     delegation — else the first such span (the caller's record of the answer);
--     working → progress, input-required / auth-required → waiting (waiting_for 'input' / 'auth'),
--     completed → completed, failed / canceled / rejected → outcome_failed (reason = the state), at the span's
--     end: a span's a2a.task.state is the last state it saw (instrumentations set it as the answer comes, on
--     a span that started with the request).
--   Framework handoff spans (OpenInference TOOL spans named 'handoff to X', OpenLLMetry traceloop.span.kind =
--     handoff, gen_ai.operation.name handoff / transfer), operation 'handoff:<trace>:<span>': delegated at the
--     span's start (target = the agent handed to); at its end (in process, the end is the acknowledgement)
--     accepted and completed, or accepted and outcome_failed when the span is in error. Nothing third-party verifies an outcome: a completed one follows the outcome rule.
-- One stored span may so give several transitions: a transition is keyed by (trace_id, span_id, transition).
--
-- oa_receipt_candidates_computed(): the stored span rows that may be transitions — our receipt spans by name,
-- and third-party spans that pass the cheap text tests below — with the columns the mapping reads. Finding them
-- is the one scan of every span (the attributes' text) that receipt views need; each row depends on itself only,
-- so the maintained state (store/maintained.py) keeps them in the table receipt_candidates per trace as spans
-- commit, and oa_receipt_candidates() reads that table once the state is current (maintenance/runs_view.sql):
-- the receipt views then cost the receipt spans, not the store.
CREATE OR REPLACE MACRO oa_receipt_candidates_computed() AS TABLE
SELECT trace_id, span_id, name, kind, status_code, service_name, principal, received_at, start_time, end_time,
       attributes, record_kind
FROM spans
-- name LIKE 'otel_agent.receipt.%', written as a range DuckDB checks against the column's dictionary
WHERE (name >= 'otel_agent.receipt.' AND name < 'otel_agent.receipt/')
   OR (record_kind IS NULL
       AND (contains(attributes, '"a2a.task.state"') OR starts_with(name, 'handoff')
            OR (contains(attributes, 'handoff') AND (contains(attributes, '"traceloop.span.kind"')
                                                     OR contains(attributes, '"gen_ai.operation.name"')))
            OR contains(attributes, '"transfer"')));

CREATE OR REPLACE MACRO oa_receipt_candidates() AS TABLE SELECT * FROM oa_receipt_candidates_computed();

CREATE OR REPLACE VIEW receipt_transition_spans AS
WITH candidates AS MATERIALIZED (SELECT * FROM oa_receipt_candidates()),
parsed AS (
    SELECT json_extract_string(attributes, [
               '$."otel_agent.record.kind"', '$."otel_agent.receipt.operation_id"',
               '$."otel_agent.receipt.handoff_id"', '$."otel_agent.receipt.transition"',
               '$."otel_agent.receipt.expected_artifact"', '$."otel_agent.receipt.reason"',
               '$."otel_agent.receipt.waiting_for"', '$."otel_agent.receipt.target"',
               '$."otel_agent.receipt.artifact_ref"']) AS a,
           trace_id, span_id, kind, service_name, principal, received_at, start_time, end_time, attributes
    FROM candidates
    WHERE name >= 'otel_agent.receipt.' AND name < 'otel_agent.receipt/'
),
mapping AS (
    SELECT principal, list(service_name) AS services
    FROM writer_trust
    WHERE trusted
    GROUP BY principal
),
-- third-party spans that may map onto transitions: cheap tests first, then the parse. Our records are never
-- third-party transitions (a2a and handoff_spans below require t[8], their record kind, to be NULL), so the
-- promoted record_kind column (the same value: otel_agent/fold/promoted.py) rules them out before any text
-- test: searching the attributes of every receipt span for strings they lack took ~200 ms per 1 M spans.
third_party AS (
    SELECT json_extract_string(attributes, [
               '$."a2a.task.id"', '$."a2a.task.state"', '$."traceloop.span.kind"', '$."openinference.span.kind"',
               '$."gen_ai.operation.name"', '$."gen_ai.handoff.to_agent"', '$."gen_ai.handoff.from_agent"',
               '$."otel_agent.record.kind"']) AS t,
           name, status_code, trace_id, span_id, kind, service_name, principal, received_at, start_time, end_time,
           attributes
    FROM candidates
    WHERE record_kind IS NULL
      AND (contains(attributes, '"a2a.task.state"') OR starts_with(name, 'handoff')
           OR (contains(attributes, 'handoff') AND (contains(attributes, '"traceloop.span.kind"')
                                                    OR contains(attributes, '"gen_ai.operation.name"')))
           OR contains(attributes, '"transfer"'))
),
a2a AS (
    SELECT t[1] AS task_id,
           replace(regexp_replace(lower(t[2]), '^task_state_', ''), '_', '-') AS state,
           -- the delegating agent's service: that of the task's first span
           first_value(service_name) OVER (PARTITION BY t[1] ORDER BY start_time, trace_id, span_id)
               AS delegator_service,
           * EXCLUDE (t)
    FROM third_party
    WHERE t[1] IS NOT NULL AND t[2] IS NOT NULL AND t[8] IS NULL
),
a2a_rows AS (
    SELECT task_id, 'delegated' AS transition, NULL AS reason, NULL AS waiting_for, start_time AS time, *
               EXCLUDE (task_id, state, start_time)
    FROM a2a
    QUALIFY row_number() OVER (PARTITION BY task_id ORDER BY start_time, trace_id, span_id) = 1
    UNION ALL BY NAME
    SELECT task_id, 'accepted' AS transition, NULL AS reason, NULL AS waiting_for, start_time AS time, *
               EXCLUDE (task_id, state, start_time)
    FROM a2a
    WHERE state <> 'submitted'
    QUALIFY row_number() OVER (PARTITION BY task_id
                               ORDER BY service_name IS NOT DISTINCT FROM delegator_service, start_time, trace_id,
                                        span_id) = 1
    UNION ALL BY NAME
    SELECT task_id,
           CASE state
               WHEN 'working' THEN 'progress'
               WHEN 'input-required' THEN 'waiting'
               WHEN 'auth-required' THEN 'waiting'
               WHEN 'completed' THEN 'completed'
               ELSE 'outcome_failed'
           END AS transition,
           CASE WHEN state IN ('failed', 'canceled', 'rejected') THEN state END AS reason,
           CASE state WHEN 'input-required' THEN 'input' WHEN 'auth-required' THEN 'auth' END AS waiting_for,
           end_time AS time,
           * EXCLUDE (task_id, state, start_time)
    FROM a2a
    WHERE state IN ('working', 'input-required', 'auth-required', 'completed', 'failed', 'canceled', 'rejected')
),
handoff_spans AS (
    SELECT 'handoff:' || trace_id || ':' || span_id AS operation_id,
           coalesce(t[6], CASE WHEN starts_with(name, 'handoff to ') THEN substr(name, 12) END) AS target,
           * EXCLUDE (t)
    FROM third_party
    WHERE t[8] IS NULL AND t[1] IS NULL
      AND ((upper(t[4]) = 'TOOL' AND starts_with(name, 'handoff to ')) OR lower(t[3]) = 'handoff'
           OR (t[4] IS NULL AND t[3] IS NULL AND lower(t[5]) IN ('handoff', 'transfer')))
),
handoff_rows AS (
    SELECT operation_id, 'delegated' AS transition, target, NULL AS reason, start_time AS time, *
               EXCLUDE (operation_id, target, start_time)
    FROM handoff_spans
    UNION ALL BY NAME
    SELECT operation_id, unnest(CASE WHEN status_code = 'ERROR' THEN ['accepted', 'outcome_failed']
                                     ELSE ['accepted', 'completed'] END) AS transition,
           target, CASE WHEN status_code = 'ERROR' THEN 'handoff span in error' END AS reason, end_time AS time, *
               EXCLUDE (operation_id, target, start_time)
    FROM handoff_spans
),
unified AS (
    SELECT p.a[2] AS operation_id, p.a[3] AS handoff_id, p.a[4] AS transition, p.start_time AS time,
           p.a[5] AS expected_artifact, p.a[6] AS reason, p.a[7] AS waiting_for, p.a[8] AS target,
           p.a[9] AS artifact_ref, p.service_name, p.principal, p.trace_id, p.span_id, p.kind, p.received_at,
           p.end_time, p.attributes, coalesce(p.a[1] = 'receipt_transition', false) AS is_transition,
           'otel_agent' AS source
    FROM parsed AS p
    UNION ALL
    SELECT task_id, task_id, transition, time, NULL, reason, waiting_for, NULL, NULL, service_name, principal,
           trace_id, span_id, kind, received_at, end_time, attributes, true, 'a2a'
    FROM a2a_rows
    UNION ALL
    SELECT operation_id, operation_id, transition, time, NULL, reason, NULL, target, NULL, service_name, principal,
           trace_id, span_id, kind, received_at, end_time, attributes, true, 'handoff_span'
    FROM handoff_rows
)
SELECT p.operation_id,
       p.handoff_id,
       p.transition,
       CASE p.transition
           WHEN 'delegated' THEN 0
           WHEN 'accepted' THEN 1
           WHEN 'progress' THEN 2
           WHEN 'waiting' THEN 2
           WHEN 'completed' THEN 3
           WHEN 'outcome_verified' THEN 4
           WHEN 'outcome_failed' THEN 4
       END AS transition_order,
       p.time,
       p.expected_artifact,
       p.reason,
       p.waiting_for,
       p.target,
       p.artifact_ref,
       p.service_name,
       p.principal,
       CASE
           WHEN p.principal IS NULL THEN 'unchecked'
           WHEN m.services IS NOT NULL THEN
               CASE WHEN list_contains(m.services, p.service_name) OR list_contains(m.services, '*')
                    THEN 'trusted' ELSE 'untrusted' END
           WHEN p.principal = p.service_name THEN 'trusted'
           ELSE 'untrusted'
       END AS trust,
       p.trace_id,
       p.span_id,
       p.kind AS span_kind,
       p.received_at,
       p.end_time,
       p.attributes,
       p.is_transition,
       p.source
FROM unified p
LEFT JOIN mapping m ON m.principal = p.principal;

CREATE OR REPLACE VIEW receipt_transitions AS
WITH once AS (
    SELECT *
    FROM receipt_transition_spans
    QUALIFY row_number() OVER (PARTITION BY trace_id, span_id, transition ORDER BY end_time) = 1
)
SELECT operation_id, handoff_id, transition, transition_order, time, expected_artifact, reason, waiting_for, target,
       artifact_ref, service_name, principal, trust, source,
       json_extract_string(attributes, '$."otel_agent.run.id"') AS run_id,
       json_extract_string(attributes, '$."otel_agent.step.id"') AS step_id,
       trace_id, span_id, span_kind, received_at
FROM once
WHERE is_transition;

-- One row per handoff attempt (operation id, handoff id), evaluated with the transitions whose time <= as_of.
CREATE OR REPLACE MACRO receipt_attempts_at(
    as_of,
    ack_window := INTERVAL 120 SECOND,
    progress_window := INTERVAL 15 MINUTE,
    verification_window := INTERVAL 120 SECOND,
    clock_skew := INTERVAL 5 SECOND
) AS TABLE
WITH grouped AS (
    SELECT operation_id,
           handoff_id,
           is_transition,
           min(time) AS first_transition_at,
           max(time) AS last_transition_at,
           min(time) FILTER (WHERE transition = 'delegated') AS delegated_at,
           min(service_name) FILTER (WHERE transition = 'delegated') AS delegator,
           min(target) FILTER (WHERE transition = 'delegated') AS target,
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
           min(artifact_ref) FILTER (WHERE transition = 'completed') AS artifact_ref,
           max(time) FILTER (WHERE transition = 'outcome_verified') AS verified_at,
           max(time) FILTER (WHERE transition = 'outcome_failed') AS failed_at,
           arg_max(reason, (time, reason)) FILTER (WHERE transition = 'outcome_failed') AS failure_reason,
           min(service_name) FILTER (WHERE trust = 'untrusted') AS untrusted_service,
           min(principal) FILTER (WHERE trust = 'untrusted') AS untrusted_principal,
           min(transition) FILTER (WHERE transition_order IS NULL) AS unrecognised_transition,
           CASE WHEN min(source) = max(source) THEN min(source) ELSE 'mixed' END AS source
    FROM receipt_transition_spans
    WHERE time <= CAST(as_of AS TIMESTAMP_NS)
    GROUP BY operation_id, handoff_id, is_transition
    -- Conditions on aggregates, not on the group keys: DuckDB would push a filter on a key down to the scan
    -- and parse the JSON once more there.
    HAVING bool_and(is_transition) AND bool_and(operation_id IS NOT NULL AND handoff_id IS NOT NULL)
),
a AS (
    SELECT * EXCLUDE (is_transition) FROM grouped
),
checked AS (
    SELECT *,
           CAST(as_of AS TIMESTAMP_NS) AS evaluated_at,
           CASE
               WHEN untrusted_service IS NOT NULL THEN
                   'transition(s) from an untrusted writer (' || untrusted_service || ' as principal '
                   || untrusted_principal || ')'
               WHEN unrecognised_transition IS NOT NULL THEN
                   'transition of an unknown type (' || unrecognised_transition || ')'
               WHEN min_acceptor <> max_acceptor THEN
                   'accepted by more than one service (' || min_acceptor || ', ' || max_acceptor || ')'
               WHEN delegated_at IS NULL THEN
                   'transitions recorded but no delegation of this handoff'
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
       untrusted_service IS NOT NULL AS untrusted,
       CASE WHEN untrusted_service IS NOT NULL THEN untrusted_service || ' as principal ' || untrusted_principal END
           AS untrusted_writer,
       source,
       evaluated_at
FROM checked;

-- One row per operation: its latest attempt's state, except that an untrusted writer anywhere makes the
-- operation uncertain and a verified attempt anywhere makes it verified.
CREATE OR REPLACE MACRO receipt_state_at(
    as_of,
    ack_window := INTERVAL 120 SECOND,
    progress_window := INTERVAL 15 MINUTE,
    verification_window := INTERVAL 120 SECOND,
    clock_skew := INTERVAL 5 SECOND
) AS TABLE
WITH att AS (
    SELECT *, (coalesce(delegated_at, first_transition_at), handoff_id) AS recency
    FROM receipt_attempts_at(as_of, ack_window := ack_window, progress_window := progress_window,
                             verification_window := verification_window, clock_skew := clock_skew)
),
ops AS (
    SELECT operation_id,
           count(*) AS attempts,
           max(recency) AS current,
           list_sort(list(handoff_id)) AS handoff_ids,
           bool_or(untrusted) AS untrusted,
           arg_max(handoff_id || ': ' || why, recency) FILTER (WHERE untrusted) AS untrusted_why,
           arg_max(handoff_id || ': ' || why, recency) FILTER (WHERE state = 'verified') AS verified_why,
           max(last_transition_at) AS last_transition_at
    FROM att
    GROUP BY operation_id
)
SELECT o.operation_id,
       CASE WHEN o.untrusted THEN 'uncertain'
            WHEN o.verified_why IS NOT NULL THEN 'verified'
            ELSE c.state END AS state,
       CASE WHEN o.untrusted AND NOT c.untrusted THEN 'attempt ' || o.untrusted_why
            WHEN o.untrusted THEN c.why
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
       o.untrusted,
       c.source,
       c.evaluated_at
FROM ops o
JOIN att c ON c.operation_id = o.operation_id AND c.recency = o.current;

-- As of now, with the default windows. (No evaluated_at column: a view's rows depend only on the data.)
CREATE OR REPLACE VIEW receipt_attempts AS
SELECT * EXCLUDE (evaluated_at) FROM receipt_attempts_at(timezone('UTC', now()));

CREATE OR REPLACE VIEW receipt_state AS
SELECT * EXCLUDE (evaluated_at) FROM receipt_state_at(timezone('UTC', now()));
