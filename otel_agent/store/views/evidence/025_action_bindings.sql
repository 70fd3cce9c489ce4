-- Evidence bound to its action (seed 001: "is this telemetry really from the candidate we just ran?";
-- docs/views-evidence.md). Numbered before 030 on purpose: claim_support and claim_lineage read the mismatches.
--
-- action_bindings: the otel_agent.action.* binding of every record that carries one — evidence items and
-- verifier results name the action they were produced for, claims the action they are about. First copy of a
-- record wins (as in the record views).
-- evidence_binding_mismatches: one row per citation whose claim and evidence give different values for a
-- component both give (run id, config hash, variant). Such evidence does not support the claim.

-- oa_action_binding(attrs): the components that bind a record to its action, from its attributes, named once
-- (action_bindings below, and claim_lineage_of's evidence, 035_lineage_of.sql): a struct a view spreads into
-- its columns with unnest(). The parameter is not named like a column of spans.
CREATE OR REPLACE MACRO oa_action_binding(attrs) AS {
    'action_run_id': attrs->>'otel_agent.action.run_id',
    'action_config_hash': attrs->>'otel_agent.action.config_hash',
    'action_variant': attrs->>'otel_agent.action.variant'
};

CREATE OR REPLACE VIEW action_bindings AS
WITH raw AS (
    SELECT attributes->>'otel_agent.record.kind' AS record_kind,
           CASE attributes->>'otel_agent.record.kind'
               WHEN 'evidence_item' THEN attributes->>'otel_agent.evidence.id'
               WHEN 'claim' THEN attributes->>'otel_agent.claim.id'
               ELSE span_id
           END AS record_id,
           attributes->>'otel_agent.verifier.target_id' AS verifier_target_id,
           unnest(oa_action_binding(attributes)),
           trace_id, span_id, start_time AS recorded_at
    FROM spans
    WHERE name IN ('otel_agent.evidence_item', 'otel_agent.claim') OR name LIKE 'verify %'
)
SELECT record_kind, record_id,
       CASE WHEN record_kind = 'verifier_result' THEN verifier_target_id END AS verifier_target_id,
       action_run_id, action_config_hash, action_variant, trace_id, span_id, recorded_at
FROM raw
WHERE record_kind IN ('evidence_item', 'claim', 'verifier_result') AND record_id IS NOT NULL
  AND (action_run_id IS NOT NULL OR action_config_hash IS NOT NULL OR action_variant IS NOT NULL)
QUALIFY row_number() OVER (PARTITION BY record_kind, record_id ORDER BY recorded_at, trace_id, span_id) = 1;

CREATE OR REPLACE VIEW evidence_binding_mismatches AS
WITH pairs AS (
    SELECT ci.citation_id, ci.claim_id, ci.evidence_id,
           c.action_run_id AS claim_run_id, c.action_config_hash AS claim_config_hash,
           c.action_variant AS claim_variant,
           e.action_run_id AS evidence_run_id, e.action_config_hash AS evidence_config_hash,
           e.action_variant AS evidence_variant
    FROM citations ci
    JOIN action_bindings c ON c.record_kind = 'claim' AND c.record_id = ci.claim_id
    JOIN action_bindings e ON e.record_kind = 'evidence_item' AND e.record_id = ci.evidence_id
),
compared AS (
    SELECT *,
           list_filter([
               CASE WHEN claim_run_id <> evidence_run_id THEN 'run_id' END,
               CASE WHEN claim_config_hash <> evidence_config_hash THEN 'config_hash' END,
               CASE WHEN claim_variant <> evidence_variant THEN 'variant' END
           ], lambda x: x IS NOT NULL) AS mismatched
    FROM pairs
)
SELECT citation_id, claim_id, evidence_id, mismatched,
       claim_run_id, claim_config_hash, claim_variant,
       evidence_run_id, evidence_config_hash, evidence_variant
FROM compared
WHERE len(mismatched) > 0;
