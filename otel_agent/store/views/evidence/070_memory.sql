-- Memory (docs/views-evidence.md): agents only propose; a proposal becomes a memory item when a reviewer
-- approves it (its latest approve/reject verdict). Scopes are 'type:ref' strings (organization, user, project,
-- flow, skill, session, run).

CREATE OR REPLACE VIEW memory_proposals AS
WITH raw AS (
    SELECT a['otel_agent.memory_proposal.id'] AS proposal_id,
           a['otel_agent.memory_proposal.memory_type'] AS memory_type,
           a['otel_agent.memory_proposal.content'] AS content,
           a['otel_agent.memory_proposal.summary'] AS summary,
           coalesce(a['otel_agent.memory_proposal.scopes'], []::VARCHAR[]) AS scopes,
           coalesce(a['otel_agent.memory_proposal.source_run_id'], run_id) AS source_run_id,
           a['otel_agent.memory_proposal.rationale'] AS rationale,
           * EXCLUDE (a, recorded_at), recorded_at AS proposed_at
    FROM oa_record_spans('otel_agent.memory_proposal', 'memory_proposal', '{
               "otel_agent.record.kind": "VARCHAR", "otel_agent.memory_proposal.id": "VARCHAR",
               "otel_agent.memory_proposal.memory_type": "VARCHAR", "otel_agent.memory_proposal.content": "VARCHAR",
               "otel_agent.memory_proposal.summary": "VARCHAR", "otel_agent.memory_proposal.scopes": ["VARCHAR"],
               "otel_agent.memory_proposal.source_run_id": "VARCHAR",
               "otel_agent.memory_proposal.rationale": "VARCHAR", "otel_agent.run.id": "VARCHAR",
               "otel_agent.step.id": "VARCHAR"}')
    WHERE a['otel_agent.memory_proposal.id'] IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY proposal_id ORDER BY proposed_at, trace_id, span_id) = 1
)
SELECT p.proposal_id, p.memory_type, p.content, p.summary, p.scopes, p.source_run_id, p.rationale,
       CASE r.status WHEN 'approved' THEN 'approved' WHEN 'rejected' THEN 'rejected' ELSE 'pending' END AS status,
       r.reviewed_by, r.reviewed_at, r.review_reason,
       p.run_id, p.step_id, p.trace_id, p.span_id, p.service_name, p.proposed_at
FROM raw p
LEFT JOIN oa_reviews_of('memory_proposal') r ON r.target_id = p.proposal_id;

CREATE OR REPLACE VIEW memory_items AS
SELECT proposal_id AS memory_id,
       memory_type,
       content,
       summary,
       scopes,
       list_transform(scopes, lambda s: {'type': split_part(s, ':', 1),
                                         'ref': s[length(split_part(s, ':', 1)) + 2:]}) AS scope_list,
       source_run_id,
       rationale,
       reviewed_by AS approved_by,
       reviewed_at AS approved_at,
       review_reason AS approval_reason,
       proposed_at,
       proposal_id
FROM memory_proposals
WHERE status = 'approved';

-- The memory that applies in a context described by a set of scopes, e.g.
--   SELECT * FROM memory_for(['project:proj_research', 'flow:deep_research', 'skill:citation-extractor'])
-- An item applies when every one of its scopes is in the set (an item scoped to project P and flow F is not
-- shown to flow F of another project). Episodic run summaries are memory items of type 'episodic'.
CREATE OR REPLACE MACRO memory_for(scope_set) AS TABLE
SELECT m.*,
       CASE m.memory_type WHEN 'procedural' THEN 1 WHEN 'semantic' THEN 2 WHEN 'episodic' THEN 3 ELSE 4 END
           AS type_order
FROM memory_items m
WHERE len(m.scopes) > 0 AND list_has_all(CAST(scope_set AS VARCHAR[]), m.scopes)
ORDER BY type_order, m.approved_at, m.memory_id;
