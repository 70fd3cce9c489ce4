-- Layer 1: one row per span (defensively deduplicated on (trace_id, span_id): the latest end_time, then the
-- latest received_at, wins), with every attribute the run views read parsed from the JSON
-- (json_transform to STRUCTs of VARCHAR; numbers are cast where used, so a value of the wrong type reads as
-- NULL rather than failing the query).
--
-- oa_scoped_spans(rid): the raw spans a view over run rid needs — every span of every trace that holds a span
-- with otel_agent.run.id = rid (third-party spans in those traces may belong to the run, see
-- classified_spans), or of the trace whose id is rid (a third-party run is named by its trace id).
-- rid NULL: all spans.
CREATE OR REPLACE MACRO oa_scoped_spans(rid) AS TABLE
-- two branches, one of which a constant rid empties at planning time (an "rid IS NULL OR ..." filter would
-- leave the subquery in the plan of the all-runs views). run_id is the typed copy of otel_agent.run.id made at
-- fold time (fold/promoted.py): finding a run's traces reads that column, not the JSON of every span.
SELECT * FROM spans WHERE rid IS NULL
UNION ALL
SELECT *
FROM spans
WHERE rid IS NOT NULL
  AND trace_id IN (SELECT trace_id FROM spans WHERE trace_id = rid OR run_id = rid);

-- oa_attribute_text(doc): the attribute text the classification parses, each empty string value made
-- null: an attribute set to '' is absent (falls back to the next name, as a missing one does), so the
-- classification reads the parsed fields as they are instead of wrapping each in nullif (one CASE per read costs
-- the planner more than the rest of the read, docs/views-runs.md "Performance"). Stored attributes are compact
-- JSON (orjson, the native fold); the spaced form is cleaned too. In valid JSON `":` ends a key, so a value's
-- text is never touched.
CREATE OR REPLACE MACRO oa_attribute_text(doc) AS
    replace(replace(CAST(doc AS VARCHAR), '":""', '":null'), '": ""', '": null');

-- oa_span_fields_all(rid): every stored row, not yet deduplicated (for views that filter first, then
-- deduplicate the few rows they keep); with latest := true, one row per span (the latest end_time, then the
-- latest received_at). The latest row is picked here, on the raw columns, before the JSON is parsed: a window
-- over the parsed rows carries two structs of ~130 fields and about a hundred normalised columns through its
-- sort, several times the cost per run (docs/views-runs.md "Performance"). A constant false drops the window
-- from the plan.
CREATE OR REPLACE MACRO oa_span_fields_all(rid, latest := false) AS TABLE
SELECT
    trace_id, span_id, oa_text(parent_span_id) AS parent_span_id, name, kind, start_time, end_time, duration_ns,
    status_code, status_message, service_name, scope_name, received_at, in_progress,
    -- two structs: `a`, what the category and the health views read (provider_health, skill_health, tool_usage
    -- read nothing else, so the optimiser drops `b`: a JSON transform costs per key looked up), `b` the rest
    json_transform(oa_attribute_text(attributes),
        '{"otel_agent.record.kind":"VARCHAR","openinference.span.kind":"VARCHAR",'
            || '"traceloop.span.kind":"VARCHAR","llm.request.type":"VARCHAR","gen_ai.operation.name":"VARCHAR",'
            || '"gen_ai.system":"VARCHAR","gen_ai.provider.name":"VARCHAR","llm.provider":"VARCHAR",'
            || '"llm.system":"VARCHAR","gen_ai.request.model":"VARCHAR","llm.model_name":"VARCHAR",'
            || '"gen_ai.response.model":"VARCHAR","gen_ai.usage.input_tokens":"VARCHAR",'
            || '"gen_ai.usage.prompt_tokens":"VARCHAR","llm.token_count.prompt":"VARCHAR",'
            || '"gen_ai.usage.output_tokens":"VARCHAR","gen_ai.usage.completion_tokens":"VARCHAR",'
            || '"llm.token_count.completion":"VARCHAR","otel_agent.retry.count":"VARCHAR",'
            || '"error.type":"VARCHAR","otel_agent.skill.name":"VARCHAR","gen_ai.skill.name":"VARCHAR",'
            || '"otel_agent.skill.version":"VARCHAR","gen_ai.skill.version":"VARCHAR",'
            || '"gen_ai.tool.name":"VARCHAR","tool.name":"VARCHAR","traceloop.entity.name":"VARCHAR",'
            || '"otel_agent.tool.provider":"VARCHAR","otel_agent.cost.usd":"VARCHAR","llm.cost.total":"VARCHAR",'
            || '"gen_ai.usage.cost":"VARCHAR","gen_ai.cost.total_cost":"VARCHAR","llm.cost.prompt":"VARCHAR",'
            || '"llm.cost.completion":"VARCHAR",'
            -- issue 32 keys
            || '"ai.operationId":"VARCHAR","ai.model.provider":"VARCHAR","ai.toolCall.name":"VARCHAR",'
            || '"mcp.method.name":"VARCHAR","ai.usage.inputTokens":"VARCHAR","ai.usage.promptTokens":"VARCHAR",'
            || '"ai.usage.outputTokens":"VARCHAR","ai.usage.completionTokens":"VARCHAR"}'
    ) AS a,
    json_transform(oa_attribute_text(attributes),
        '{"otel_agent.run.id":"VARCHAR","otel_agent.step.id":"VARCHAR","otel_agent.step.name":"VARCHAR",'
            || '"otel_agent.iteration":"VARCHAR","otel_agent.skill.invocation_id":"VARCHAR",'
            || '"otel_agent.fallback.count":"VARCHAR","otel_agent.fallback.original_provider":"VARCHAR",'
            || '"otel_agent.fallback.original_model":"VARCHAR","otel_agent.guard.name":"VARCHAR",'
            || '"otel_agent.guard.outcome":"VARCHAR","otel_agent.guard.reason":"VARCHAR",'
            || '"otel_agent.guard.stage":"VARCHAR","otel_agent.guard.target_id":"VARCHAR",'
            || '"otel_agent.verifier.name":"VARCHAR","otel_agent.verifier.outcome":"VARCHAR",'
            || '"otel_agent.verifier.score":"VARCHAR","otel_agent.verifier.reason":"VARCHAR",'
            || '"otel_agent.verifier.target_id":"VARCHAR","otel_agent.run.budget.max_model_calls":"VARCHAR",'
            || '"otel_agent.run.budget.max_tool_calls":"VARCHAR","otel_agent.run.budget.max_cost_usd":"VARCHAR",'
            || '"otel_agent.run.budget.exceeded":"VARCHAR","otel_agent.run.budget.exceeded_limits":"VARCHAR",'
            || '"otel_agent.run.usage.model_calls":"VARCHAR","otel_agent.run.usage.tool_calls":"VARCHAR",'
            || '"otel_agent.run.usage.cost_usd":"VARCHAR","otel_agent.artifact.id":"VARCHAR",'
            || '"otel_agent.artifact_version.id":"VARCHAR","otel_agent.artifact_version.number":"VARCHAR",'
            || '"otel_agent.receipt.transition":"VARCHAR","otel_agent.receipt.operation_id":"VARCHAR",'
            || '"otel_agent.receipt.handoff_id":"VARCHAR","otel_agent.receipt.target":"VARCHAR",'
            || '"otel_agent.receipt.expected_artifact":"VARCHAR","otel_agent.receipt.reason":"VARCHAR",'
            || '"otel_agent.receipt.waiting_for":"VARCHAR","otel_agent.receipt.artifact_ref":"VARCHAR",'
            || '"gen_ai.usage.total_tokens":"VARCHAR","gen_ai.usage.cache_read.input_tokens":"VARCHAR",'
            || '"gen_ai.usage.cache_creation.input_tokens":"VARCHAR",'
            || '"gen_ai.usage.reasoning.output_tokens":"VARCHAR",'
            || '"gen_ai.usage.cache_read_input_tokens":"VARCHAR",'
            || '"gen_ai.usage.cache_creation_input_tokens":"VARCHAR","gen_ai.usage.reasoning_tokens":"VARCHAR",'
            || '"gen_ai.agent.name":"VARCHAR","gen_ai.agent.id":"VARCHAR","gen_ai.workflow.name":"VARCHAR",'
            || '"gen_ai.conversation.id":"VARCHAR","gen_ai.tool.call.id":"VARCHAR","gen_ai.tool.type":"VARCHAR",'
            || '"gen_ai.data_source.id":"VARCHAR","gen_ai.handoff.from_agent":"VARCHAR",'
            || '"gen_ai.handoff.to_agent":"VARCHAR","llm.token_count.total":"VARCHAR",'
            || '"llm.token_count.prompt_details.cache_read":"VARCHAR",'
            || '"llm.token_count.prompt_details.cache_write":"VARCHAR",'
            || '"llm.token_count.completion_details.reasoning":"VARCHAR","agent.name":"VARCHAR",'
            || '"graph.node.id":"VARCHAR","session.id":"VARCHAR","traceloop.workflow.name":"VARCHAR",'
            || '"llm.usage.total_tokens":"VARCHAR","llm.usage.reasoning_tokens":"VARCHAR",'
            || '"gen_ai.guardrail.name":"VARCHAR","gen_ai.guardrail.component.name":"VARCHAR",'
            || '"gen_ai.guardrail.verdict.type":"VARCHAR","gen_ai.guardrail.verdict.reason":"VARCHAR",'
            || '"gen_ai.guardrail.target.type":"VARCHAR","gen_ai.guardrail.target.id":"VARCHAR",'
            || '"gen_ai.guardrail.action.type":"VARCHAR","gen_ai.memory.store.id":"VARCHAR",'
            || '"gen_ai.memory.record.id":"VARCHAR","gen_ai.memory.record.count":"VARCHAR",'
            || '"gen_ai.prompt.name":"VARCHAR","gen_ai.prompt.version":"VARCHAR",'
            || '"gen_ai.request.stream":"VARCHAR","gen_ai.response.time_to_first_chunk":"VARCHAR",'
            || '"gen_ai.response.id":"VARCHAR","a2a.task.id":"VARCHAR","a2a.task.state":"VARCHAR",'
            -- issue 32 keys
            || '"gen_ai.usage.cache_write.input_tokens":"VARCHAR",'
            || '"gen_ai.client.operation.time_to_first_chunk":"VARCHAR","ai.response.msToFirstChunk":"VARCHAR",'
            || '"ai.stream.msToFirstChunk":"VARCHAR","ai.telemetry.functionId":"VARCHAR","ai.toolCall.id":"VARCHAR",'
            || '"ai.usage.cachedInputTokens":"VARCHAR","ai.usage.inputTokenDetails.cacheReadTokens":"VARCHAR",'
            || '"ai.usage.inputTokenDetails.cacheWriteTokens":"VARCHAR","ai.usage.reasoningTokens":"VARCHAR",'
            || '"ai.usage.outputTokenDetails.reasoningTokens":"VARCHAR","jsonrpc.request.id":"VARCHAR",'
            || '"mcp.session.id":"VARCHAR","a2a.context.id":"VARCHAR"}'
    ) AS b
FROM (
    -- a pending span (oa_is_pending) stands for the span it announces, in progress (in_progress), until that span
    -- is stored: it takes its id and its parent's, and the latest-version rule below prefers the span itself
    -- (a later or equal end time; an equal one: the span that is not pending)
    SELECT * REPLACE (
               CASE WHEN pending THEN oa_text(parent_span_id) ELSE span_id END AS span_id,
               CASE WHEN pending
                    THEN nullif(oa_text(json_extract_string(attributes, '$."logfire.pending_parent_id"')),
                                '0000000000000000')
                    ELSE parent_span_id END AS parent_span_id),
           pending AS in_progress
    FROM (SELECT *, oa_is_pending(attributes) AS pending FROM oa_scoped_spans(rid))
)
QUALIFY NOT latest
     OR row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC, in_progress, received_at DESC) = 1;
