-- Layer 2: classification of every span across conventions, normalised fields, and the run each span
-- belongs to. The recognition order (first match wins; docs/views-runs.md explains each):
--   1. otel_agent.record.kind           (our instrumentation, otel_agent.instrument)
--   2. openinference.span.kind          (OpenInference, incl. the OpenAI Agents SDK through it)
--   3. traceloop.span.kind / llm.request.type   (OpenLLMetry)
--   4. gen_ai.operation.name            (OTel GenAI conventions, current and older)
--   5. ai.operationId                   (the Vercel AI SDK's ai.* telemetry: experimental_telemetry)
--   6. mcp.method.name                  (MCP client and server spans)
--   7. gen_ai.system with a model or token usage (GenAI conventions <= v1.26, no operation name)
-- Third-party 'agent' spans become the run (flow_run) when they are the root of what is stored of their
-- trace, and a step otherwise.
--
-- Run of a span: its otel_agent.run.id; else its parent's otel_agent.run.id (a third-party span opened
-- inside one of ours, e.g. an instrumented client call inside a provider_call); else the earliest run id
-- found in its trace; else its trace id (a trace in which no span carries a run id is one run).

-- oa_normalised_all(rid): the normalised fields, convention and base category of every stored row (not
-- deduplicated unless latest := true; the base category does not yet turn root agents into runs).
CREATE OR REPLACE MACRO oa_normalised_all(rid, latest := false) AS TABLE
WITH k AS (
    SELECT
        trace_id, span_id, parent_span_id, name, kind, start_time, end_time, duration_ns, status_code,
        status_message, service_name, scope_name, received_at, in_progress,
        a."otel_agent.record.kind" AS record_kind,
        upper(a."openinference.span.kind") AS oi_kind,
        lower(a."traceloop.span.kind") AS tl_kind,
        lower(a."gen_ai.operation.name") AS op_name,
        lower(a."llm.request.type") AS llm_request_type,
        a."ai.operationId" AS ai_operation_id,
        a."mcp.method.name" AS mcp_method,
        b."otel_agent.run.id" AS own_run_id,
        b."otel_agent.step.id" AS attr_step_id,
        b."otel_agent.step.name" AS attr_step_name,
        oa_count(b."otel_agent.iteration") AS iteration,
        -- the Vercel AI SDK's function id names what the application calls (experimental_telemetry.functionId)
        coalesce(b."gen_ai.workflow.name", b."traceloop.workflow.name", b."ai.telemetry.functionId")
            AS workflow_name,
        coalesce(
            b."gen_ai.agent.name", b."agent.name",
            CASE WHEN lower(a."traceloop.span.kind") = 'agent' THEN a."traceloop.entity.name" END,
            CASE WHEN upper(a."openinference.span.kind") = 'AGENT' THEN b."graph.node.id" END,
            -- the conventions' span name 'invoke_agent {agent}' / 'create_agent {agent}'; smolagents' '{agent}.run'
            CASE WHEN starts_with(name, 'invoke_agent ') OR starts_with(name, 'create_agent ')
                 THEN oa_text(trim(substr(name, 14))) END,
            CASE WHEN ends_with(name, '.run') AND upper(a."openinference.span.kind") = 'AGENT'
                 THEN oa_text(left(name, length(name) - 4)) END
        ) AS agent_name,
        oa_provider_name(coalesce(a."gen_ai.provider.name", a."gen_ai.system", a."llm.provider", a."llm.system",
                                  a."ai.model.provider")) AS provider,
        coalesce(a."gen_ai.request.model", a."llm.model_name") AS request_model,
        a."gen_ai.response.model" AS response_model,
        oa_count(coalesce(
            a."gen_ai.usage.input_tokens", a."gen_ai.usage.prompt_tokens", a."llm.token_count.prompt",
            a."ai.usage.inputTokens", a."ai.usage.promptTokens"
        )) AS input_tokens,
        oa_count(coalesce(
            a."gen_ai.usage.output_tokens", a."gen_ai.usage.completion_tokens", a."llm.token_count.completion",
            a."ai.usage.outputTokens", a."ai.usage.completionTokens"
        )) AS output_tokens,
        oa_count(coalesce(
            b."gen_ai.usage.total_tokens", b."llm.token_count.total", b."llm.usage.total_tokens"
        )) AS reported_total_tokens,
        oa_count(coalesce(
            b."gen_ai.usage.cache_read.input_tokens", b."gen_ai.usage.cache_read_input_tokens",
            b."llm.token_count.prompt_details.cache_read", b."ai.usage.inputTokenDetails.cacheReadTokens",
            b."ai.usage.cachedInputTokens"
        )) AS cache_read_tokens,
        -- cache_write is the 2026 name (semantic-conventions-genai) of cache_creation
        oa_count(coalesce(
            b."gen_ai.usage.cache_write.input_tokens", b."gen_ai.usage.cache_creation.input_tokens",
            b."gen_ai.usage.cache_creation_input_tokens", b."llm.token_count.prompt_details.cache_write",
            b."ai.usage.inputTokenDetails.cacheWriteTokens"
        )) AS cache_creation_tokens,
        oa_count(coalesce(
            b."gen_ai.usage.reasoning.output_tokens", b."gen_ai.usage.reasoning_tokens",
            b."llm.usage.reasoning_tokens", b."llm.token_count.completion_details.reasoning",
            b."ai.usage.outputTokenDetails.reasoningTokens", b."ai.usage.reasoningTokens"
        )) AS reasoning_tokens,
        coalesce(
            TRY_CAST(a."otel_agent.cost.usd" AS DOUBLE),
            TRY_CAST(a."llm.cost.total" AS DOUBLE),
            TRY_CAST(a."gen_ai.usage.cost" AS DOUBLE),
            TRY_CAST(a."gen_ai.cost.total_cost" AS DOUBLE),  -- LiteLLM's cost breakdown
            TRY_CAST(a."llm.cost.prompt" AS DOUBLE) + TRY_CAST(a."llm.cost.completion" AS DOUBLE)
        ) AS reported_cost_usd,
        oa_count(a."otel_agent.retry.count") AS retry_count,
        oa_count(b."otel_agent.fallback.count") AS fallback_count,
        lower(b."otel_agent.fallback.original_provider") AS fallback_from_provider,
        b."otel_agent.fallback.original_model" AS fallback_from_model,
        coalesce(
            a."gen_ai.tool.name", a."tool.name", a."ai.toolCall.name",
            CASE WHEN lower(a."traceloop.span.kind") = 'tool' THEN a."traceloop.entity.name" END,
            -- an MCP span is named '{mcp.method.name} {target}' (the client's may be prefixed: 'MCP send ...')
            CASE WHEN a."mcp.method.name" = 'tools/call' AND contains(name, 'tools/call ')
                 THEN oa_text(trim(split_part(name, 'tools/call ', 2))) END
        ) AS attr_tool_name,
        coalesce(b."gen_ai.tool.call.id", b."ai.toolCall.id") AS tool_call_id,
        b."gen_ai.tool.type" AS tool_type,
        a."otel_agent.tool.provider" AS tool_provider,
        b."gen_ai.data_source.id" AS data_source_id,
        coalesce(a."otel_agent.skill.name", a."gen_ai.skill.name") AS skill_name,
        coalesce(a."otel_agent.skill.version", a."gen_ai.skill.version") AS skill_version,
        b."otel_agent.skill.invocation_id" AS attr_skill_invocation_id,
        coalesce(b."otel_agent.guard.name", b."gen_ai.guardrail.name", b."gen_ai.guardrail.component.name")
            AS attr_guard_name,
        coalesce(lower(b."otel_agent.guard.outcome"), oa_guardrail_outcome(b."gen_ai.guardrail.verdict.type"))
            AS guard_outcome,
        coalesce(b."otel_agent.guard.reason", b."gen_ai.guardrail.verdict.reason") AS guard_reason,
        coalesce(b."otel_agent.guard.stage", b."gen_ai.guardrail.target.type") AS guard_stage,
        coalesce(b."otel_agent.guard.target_id", b."gen_ai.guardrail.target.id") AS guard_target_id,
        lower(b."gen_ai.guardrail.action.type") AS guard_action,
        b."gen_ai.memory.store.id" AS memory_store_id,
        b."gen_ai.memory.record.id" AS memory_record_id,
        oa_count(b."gen_ai.memory.record.count") AS memory_record_count,
        b."gen_ai.prompt.name" AS prompt_name,
        b."gen_ai.prompt.version" AS prompt_version,
        TRY_CAST(b."gen_ai.request.stream" AS BOOLEAN) AS attr_request_stream,
        -- seconds under the conventions' attribute and metric names, milliseconds under the Vercel AI SDK's
        coalesce(
            TRY_CAST(b."gen_ai.response.time_to_first_chunk" AS DOUBLE) * 1000,
            TRY_CAST(b."gen_ai.client.operation.time_to_first_chunk" AS DOUBLE) * 1000,
            TRY_CAST(b."ai.response.msToFirstChunk" AS DOUBLE),
            TRY_CAST(b."ai.stream.msToFirstChunk" AS DOUBLE)
        ) AS time_to_first_chunk_ms,
        b."jsonrpc.request.id" AS jsonrpc_request_id,
        b."mcp.session.id" AS mcp_session_id,
        b."gen_ai.response.id" AS response_id,
        b."a2a.task.id" AS a2a_task_id,
        oa_text(replace(lower(b."a2a.task.state"), 'task_state_', '')) AS a2a_task_state,
        b."otel_agent.verifier.name" AS attr_verifier_name,
        lower(b."otel_agent.verifier.outcome") AS verifier_outcome,
        TRY_CAST(b."otel_agent.verifier.score" AS DOUBLE) AS verifier_score,
        b."otel_agent.verifier.reason" AS verifier_reason,
        b."otel_agent.verifier.target_id" AS verifier_target_id,
        oa_count(b."otel_agent.run.budget.max_model_calls") AS budget_max_model_calls,
        oa_count(b."otel_agent.run.budget.max_tool_calls") AS budget_max_tool_calls,
        TRY_CAST(b."otel_agent.run.budget.max_cost_usd" AS DOUBLE) AS budget_max_cost_usd,
        TRY_CAST(b."otel_agent.run.budget.exceeded" AS BOOLEAN) AS attr_budget_exceeded,
        CASE
            WHEN json_valid(b."otel_agent.run.budget.exceeded_limits")
             AND json_type(b."otel_agent.run.budget.exceeded_limits") = 'ARRAY'
            THEN from_json(b."otel_agent.run.budget.exceeded_limits", '["VARCHAR"]')
        END AS attr_budget_exceeded_limits,
        -- an A2A context id is the conversation the task belongs to
        coalesce(b."gen_ai.conversation.id", b."a2a.context.id") AS conversation_id,
        b."session.id" AS session_id,
        b."otel_agent.artifact.id" AS artifact_id,
        b."otel_agent.artifact_version.id" AS artifact_version_id,
        oa_count(b."otel_agent.artifact_version.number") AS artifact_version_number,
        b."otel_agent.receipt.transition" AS receipt_transition,
        b."otel_agent.receipt.operation_id" AS receipt_operation_id,
        b."otel_agent.receipt.handoff_id" AS receipt_handoff_id,
        b."otel_agent.receipt.expected_artifact" AS receipt_expected_artifact,
        b."otel_agent.receipt.reason" AS receipt_reason,
        b."otel_agent.receipt.waiting_for" AS receipt_waiting_for,
        b."otel_agent.receipt.artifact_ref" AS receipt_artifact_ref,
        coalesce(
            b."otel_agent.receipt.target", b."gen_ai.handoff.to_agent",
            CASE WHEN starts_with(name, 'handoff to ') THEN oa_text(substr(name, 12)) END
        ) AS handoff_to,
        b."gen_ai.handoff.from_agent" AS handoff_from,
        a."error.type" AS attr_error_type,
        (a."gen_ai.system" IS NOT NULL AND (
            a."gen_ai.request.model" IS NOT NULL OR a."gen_ai.usage.input_tokens" IS NOT NULL
            OR a."gen_ai.usage.prompt_tokens" IS NOT NULL
        )) AS legacy_model_call
    FROM oa_span_fields_all(rid, latest := latest)
)
    SELECT
        k.*,
        CASE
            WHEN record_kind IS NOT NULL THEN 'otel_agent'
            WHEN oi_kind IS NOT NULL THEN 'openinference'
            WHEN tl_kind IS NOT NULL OR llm_request_type IS NOT NULL THEN 'openllmetry'
            WHEN op_name IS NOT NULL THEN 'gen_ai'
            WHEN ai_operation_id IS NOT NULL THEN 'vercel_ai'
            WHEN mcp_method IS NOT NULL THEN 'mcp'
            WHEN legacy_model_call THEN 'gen_ai_legacy'
            ELSE 'none'
        END AS convention,
        CASE
            WHEN record_kind IS NOT NULL THEN
                CASE record_kind
                    WHEN 'flow_run' THEN 'flow_run'
                    WHEN 'step' THEN 'step'
                    WHEN 'skill_invocation' THEN 'skill_invocation'
                    WHEN 'provider_call' THEN 'provider_call'
                    WHEN 'proxy_request' THEN 'provider_call'  -- a proxy's inference span: a provider call too
                    WHEN 'tool_invocation' THEN 'tool_invocation'
                    WHEN 'guard_result' THEN 'guard_result'
                    WHEN 'verifier_result' THEN 'verifier_result'
                    WHEN 'receipt_transition' THEN 'handoff'
                    WHEN 'handoff_work' THEN 'handoff'
                    ELSE 'record'
                END
            WHEN oi_kind IS NOT NULL THEN
                CASE oi_kind
                    WHEN 'LLM' THEN 'provider_call'
                    WHEN 'EMBEDDING' THEN 'provider_call'
                    WHEN 'RETRIEVER' THEN 'retrieval'
                    WHEN 'RERANKER' THEN 'retrieval'
                    WHEN 'TOOL' THEN
                        CASE WHEN starts_with(name, 'handoff to ') THEN 'handoff' ELSE 'tool_invocation' END
                    WHEN 'AGENT' THEN 'agent'
                    WHEN 'GUARDRAIL' THEN 'guard_result'
                    WHEN 'EVALUATOR' THEN 'verifier_result'
                    ELSE 'other'
                END
            WHEN tl_kind IS NOT NULL THEN
                CASE tl_kind
                    WHEN 'workflow' THEN 'flow_run'
                    WHEN 'task' THEN 'step'
                    WHEN 'agent' THEN 'agent'
                    WHEN 'tool' THEN 'tool_invocation'
                    WHEN 'handoff' THEN 'handoff'
                    ELSE 'other'
                END
            WHEN llm_request_type IS NOT NULL THEN
                -- LiteLLM (SDK and proxy) writes its call type here: acompletion, aembedding, anthropic_messages, ...
                CASE WHEN llm_request_type IN ('chat', 'completion', 'embedding', 'rerank', 'acompletion',
                                               'text_completion', 'atext_completion', 'aembedding',
                                               'anthropic_messages', 'responses', 'aresponses') THEN 'provider_call'
                     ELSE 'other' END
            WHEN op_name IS NOT NULL THEN
                CASE
                    WHEN op_name IN ('chat', 'text_completion', 'generate_content', 'embeddings', 'completion',
                                     'embedding') THEN 'provider_call'
                    WHEN op_name = 'retrieval' THEN 'retrieval'
                    -- load_skill / read_skill_resource / command refine execute_tool (gen_ai.skill.*)
                    WHEN op_name IN ('execute_tool', 'load_skill', 'read_skill_resource', 'command')
                        THEN 'tool_invocation'
                    WHEN op_name = 'invoke_agent' THEN 'agent'
                    WHEN op_name = 'invoke_workflow' THEN 'flow_run'
                    -- agent_step: one turn of an agent's loop (model call, then its tools), e.g. @ai-sdk/otel
                    WHEN op_name IN ('plan', 'agent_step') THEN 'step'
                    -- run_guardrail: the name of the drafts instrumentations emit today (opentelemetry-util-genai)
                    WHEN op_name IN ('apply_guardrail', 'run_guardrail') THEN 'guard_result'
                    WHEN op_name IN ('create_memory_store', 'delete_memory_store', 'create_memory', 'search_memory',
                                     'update_memory', 'upsert_memory', 'delete_memory') THEN 'memory'
                    WHEN op_name IN ('handoff', 'transfer') THEN 'handoff'
                    -- fetch_response, create_agent: no inference, no tool, no run of their own
                    ELSE 'other'
                END
            WHEN ai_operation_id IS NOT NULL THEN
                -- the Vercel AI SDK: ai.generateText / streamText / generateObject / streamObject run the tool
                -- loop (an agent), their .doGenerate / .doStream / .doEmbed are the model calls, ai.toolCall the
                -- tools; ai.embed / ai.embedMany / ai.rerank wrap their calls (other)
                CASE
                    WHEN ai_operation_id = 'ai.toolCall' THEN 'tool_invocation'
                    WHEN regexp_matches(ai_operation_id, '\.do(Generate|Stream|Embed|Rerank)$') THEN 'provider_call'
                    WHEN ai_operation_id IN ('ai.generateText', 'ai.streamText', 'ai.generateObject',
                                             'ai.streamObject') THEN 'agent'
                    ELSE 'other'
                END
            WHEN mcp_method IS NOT NULL THEN
                -- MCP (the SDK's own spans; semantic conventions mcp.*): a tools/call is a tool invocation, on the
                -- client and on the server (the server's span, a child through the propagated context, is nested)
                CASE WHEN mcp_method = 'tools/call' THEN 'tool_invocation' ELSE 'other' END
            WHEN legacy_model_call THEN 'provider_call'
            ELSE 'other'
        END AS base_category
    FROM k;

-- oa_classified(rid): one row per span (deduplicated), with the category, run and nesting resolved.
CREATE OR REPLACE MACRO oa_classified(rid) AS TABLE
WITH RECURSIVE c AS MATERIALIZED (
    -- the latest row of each span, picked on the raw rows (oa_span_fields_all). Not DISTINCT ON (tried in
    -- 93039ab, ~7 % less CPU per run): over the whole store its hash aggregate holds every wide row in memory
    -- and the runs view ran out of the receiver's default 1 GB on 1 M spans, where the window's sort spills
    -- (docs/views-runs.md, "Performance")
    SELECT * FROM oa_normalised_all(rid, latest := true)
),
parents AS MATERIALIZED (
    SELECT trace_id, span_id, parent_span_id, base_category, own_run_id FROM c
),
-- What the events of a span say, read in one pass over span_events and one over logs (plus the log records with
-- no span context, matched by response id), all joined with the spans once, on keys (an event's JSON is read
-- only once it is known to belong to a span that can use it):
-- * exceptions: the first `exception` span event of a span in ERROR (OpenInference, pydantic-ai, smolagents and
--   others record a failure only so; src 0), and the GenAI gen_ai.client.operation.exception event, an OTLP log
--   record (src 1) of the span it is parented to (its trace_id/span_id), else, with no span context, of the
--   provider call whose gen_ai.response.id it carries (ended within an hour of the record). from_log: the span
--   has such a record (the operation failed, whatever the span's status says).
-- * guardrail verdicts: the GenAI gen_ai.guardrail.result event (semantic-conventions-genai, Development) of a
--   third-party guard span (apply_guardrail / run_guardrail, OpenInference GUARDRAIL; our guard_result records always carry
--   otel_agent.guard.* and are not looked up, which keeps the lookup off our spans), as a span event on it
--   (src 2) or as a log record parented to it (src 3); its gen_ai.guardrail.* attributes fill what the span's
--   own attributes lack (the span wins, then the span event, then the log record).
-- A re-delivered log record carries the same values (arg_min picks one).
exceptions AS MATERIALIZED (
    SELECT
        trace_id, span_id,
        arg_min(exception_type, k) FILTER (WHERE exception_type IS NOT NULL) AS exception_type,
        arg_min(exception_message, k) FILTER (WHERE exception_message IS NOT NULL) AS exception_message,
        bool_or(src = 1) AS from_log,
        bool_or(src = 0) AS has_exception_event,
        -- one struct, not six columns, through the layers below (their planning time grows with columns)
        CASE WHEN bool_or(src >= 2) THEN {
            'name': arg_min(guard_name, k) FILTER (WHERE guard_name IS NOT NULL),
            'verdict': arg_min(guard_verdict, k) FILTER (WHERE guard_verdict IS NOT NULL),
            'reason': arg_min(guard_reason, k) FILTER (WHERE guard_reason IS NOT NULL),
            'stage': arg_min(guard_stage, k) FILTER (WHERE guard_stage IS NOT NULL),
            'target_id': arg_min(guard_target_id, k) FILTER (WHERE guard_target_id IS NOT NULL),
            'action': arg_min(guard_action, k) FILTER (WHERE guard_action IS NOT NULL)} END AS ev_guard
    FROM (
        SELECT trace_id, span_id, src, k, exception_type, exception_message,
               oa_text(coalesce(oa_text(g->>'gen_ai.guardrail.name'), g->>'gen_ai.guardrail.component.name'))
                   AS guard_name,
               oa_text(g->>'gen_ai.guardrail.verdict.type') AS guard_verdict,
               oa_text(g->>'gen_ai.guardrail.verdict.reason') AS guard_reason,
               oa_text(g->>'gen_ai.guardrail.target.type') AS guard_stage,
               oa_text(g->>'gen_ai.guardrail.target.id') AS guard_target_id,
               oa_text(lower(g->>'gen_ai.guardrail.action.type')) AS guard_action
        FROM (
            SELECT y.trace_id, y.span_id, y.src, (y.src, y.ord) AS k,  -- k: the order
                   CASE WHEN y.src <= 1 THEN oa_text(y.doc->>'exception.type') END AS exception_type,
                   CASE WHEN y.src <= 1 THEN oa_text(y.doc->>'exception.message') END AS exception_message,
                   CASE WHEN y.src >= 2 THEN y.doc END AS g
            FROM (
                SELECT trace_id, span_id, CASE WHEN name = 'exception' THEN 0 ELSE 2 END AS src, event_index AS ord,
                       attributes AS doc
                FROM span_events
                WHERE name IN ('exception', 'gen_ai.guardrail.result')
                UNION ALL
                SELECT trace_id, span_id, CASE WHEN event_name = 'gen_ai.guardrail.result' THEN 3 ELSE 1 END,
                       epoch_ns(time), attributes
                FROM logs
                WHERE event_name IN ('gen_ai.client.operation.exception', 'gen_ai.guardrail.result')
                  AND oa_text(span_id) IS NOT NULL
                UNION ALL
                SELECT r.trace_id, r.span_id, 1, epoch_ns(l.time), l.attributes
                FROM logs AS l
                JOIN (SELECT trace_id, span_id, response_id, end_time FROM c WHERE base_category = 'provider_call')
                    AS r
                    ON r.response_id = l.attributes->>'gen_ai.response.id'
                    -- a call that ended within an hour of the record: the maintained state finds the calls a new
                    -- record names in that window of the store, not in all of it (store/maintained.py)
                   AND oa_log_time(l.time, l.observed_time)
                       BETWEEN r.end_time - INTERVAL 1 HOUR AND r.end_time + INTERVAL 1 HOUR
                WHERE l.event_name = 'gen_ai.client.operation.exception' AND oa_text(l.span_id) IS NULL
            ) AS y
            -- one join with the spans for every source: an exception event counts on a span in ERROR, a guardrail
            -- result (event or log record) on a third-party guard span, an exception log record on any span
            JOIN c ON c.trace_id = y.trace_id AND c.span_id = y.span_id
              AND CASE y.src
                      WHEN 0 THEN true  -- on any span: one not in ERROR still carries the failure up (below)
                      WHEN 1 THEN true
                      ELSE c.base_category = 'guard_result' AND c.record_kind IS NULL
                  END
        ) AS y
    ) AS x
    GROUP BY trace_id, span_id
),
trace_runs AS (
    SELECT trace_id, arg_min(own_run_id, start_time) AS trace_run_id
    FROM c
    WHERE own_run_id IS NOT NULL
    GROUP BY trace_id
),
-- What the children of a span say, in one pass: usage recorded by provider calls nested in a provider call (a
-- second instrumentation of the same request) fills what the outer call lacks, since only the outer one is
-- counted; a span in error with a child in error is not where the failure began (errors count at their origin).
nested_usage AS (
    SELECT
        trace_id, parent_span_id,
        any_value(response_model) FILTER (WHERE is_pc) AS response_model,
        CAST(sum(input_tokens) FILTER (WHERE is_pc) AS BIGINT) AS input_tokens,
        CAST(sum(output_tokens) FILTER (WHERE is_pc) AS BIGINT) AS output_tokens,
        CAST(sum(reported_total_tokens) FILTER (WHERE is_pc) AS BIGINT) AS reported_total_tokens,
        CAST(sum(cache_read_tokens) FILTER (WHERE is_pc) AS BIGINT) AS cache_read_tokens,
        CAST(sum(cache_creation_tokens) FILTER (WHERE is_pc) AS BIGINT) AS cache_creation_tokens,
        CAST(sum(reasoning_tokens) FILTER (WHERE is_pc) AS BIGINT) AS reasoning_tokens,
        fsum(reported_cost_usd) FILTER (WHERE is_pc) AS reported_cost_usd
    FROM (SELECT c.trace_id, c.parent_span_id, c.response_model, c.input_tokens, c.output_tokens,
                 c.reported_total_tokens, c.cache_read_tokens, c.cache_creation_tokens, c.reasoning_tokens,
                 c.reported_cost_usd, c.base_category = 'provider_call' AS is_pc
          FROM c)
    WHERE parent_span_id IS NOT NULL AND is_pc
    GROUP BY trace_id, parent_span_id
),
-- Where a failure began (issue 32): a span in error is not the origin of its failure when any span below it, at any
-- depth, failed — is in error, or carries an `exception` span event (a framework's agent span often ends with status
-- OK and the exception of the call it ran recorded, while the root above it is in error again): the failure
-- propagated up through it. Walked up from each such span (few: no failure, no walk) through its ancestors. A
-- control-flow exception (oa_control_flow_exception) is no failure, in error or not.
failed_below(trace_id, span_id, depth) AS (
    SELECT DISTINCT c.trace_id, c.parent_span_id, 0
    FROM c
    LEFT JOIN exceptions AS x ON x.trace_id = c.trace_id AND x.span_id = c.span_id
    WHERE c.parent_span_id IS NOT NULL
      AND (c.attr_error_type IS NOT NULL OR coalesce(x.from_log, false)
           OR ((c.status_code = 'ERROR' OR coalesce(x.has_exception_event, false))
               AND NOT oa_control_flow_exception(x.exception_type)))
    UNION
    SELECT f.trace_id, p.parent_span_id, f.depth + 1
    FROM failed_below AS f
    JOIN parents AS p ON p.trace_id = f.trace_id AND p.span_id = f.span_id
    WHERE p.parent_span_id IS NOT NULL AND f.depth < 128
),
failure_below AS (
    SELECT DISTINCT trace_id, span_id FROM failed_below
),
-- An MCP tools/call answered with an error (the tool result's isError; issue 32): the MCP conventions put it on the
-- server's span of the call (error.type 'tool_error'), while the client's span of the same call — the server's
-- parent through the propagated context, with the same JSON-RPC request id — may carry nothing. The client's is the
-- counted tool row (the server's is nested), so it takes the answer's error: in error, with the answer's type and
-- message. It is the failure's way up, not its origin (the server's span stays that: one failure, counted once).
answered_in_error AS (
    SELECT
        c.trace_id, c.parent_span_id AS span_id, c.jsonrpc_request_id,
        arg_min(coalesce(c.attr_error_type, x.exception_type, oa_error_type_of_message(c.status_message), '_OTHER'),
                c.span_id) AS error_type,
        bool_or(c.attr_error_type IS NOT NULL OR x.exception_type IS NOT NULL) AS typed,
        arg_min(coalesce(oa_text(c.status_message), x.exception_message), c.span_id) AS error_message
    FROM c
    LEFT JOIN exceptions AS x ON x.trace_id = c.trace_id AND x.span_id = c.span_id
    WHERE c.mcp_method = 'tools/call' AND c.parent_span_id IS NOT NULL AND c.jsonrpc_request_id IS NOT NULL
      AND (c.status_code = 'ERROR' OR c.attr_error_type IS NOT NULL OR coalesce(x.from_log, false))
    GROUP BY c.trace_id, c.parent_span_id, c.jsonrpc_request_id
),
-- User metadata (issue 32, docs/views-runs.md "Metadata"): the Vercel AI SDK's ai.telemetry.metadata.* and
-- ai.settings.context.* attributes (the key after the prefix), OpenInference's `metadata` (a JSON object as a
-- string: its top-level keys) and `tag.tags` (key 'tags', the JSON array as text), as one MAP(VARCHAR, VARCHAR);
-- on a key given twice the prefixed attribute wins, then `metadata`. Parsed only on the spans whose text has
-- such a key (a filter first), deduplicated as the spans are.
span_metadata AS (
    SELECT s.trace_id, s.span_id, (
        SELECT CASE WHEN count(*) > 0 THEN map_from_entries(list({'key': mk, 'value': mv})) END
        FROM (
            SELECT mk, arg_min(mv, o) AS mv
            FROM (
                SELECT 0 AS o,
                       CASE WHEN starts_with(key, 'ai.telemetry.metadata.') THEN substr(key, 23)
                            ELSE substr(key, 21) END AS mk,
                       coalesce(value->>'$', CAST(value AS VARCHAR)) AS mv
                FROM json_each(s.attributes)
                WHERE starts_with(key, 'ai.telemetry.metadata.') OR starts_with(key, 'ai.settings.context.')
                UNION ALL
                SELECT 1, key, coalesce(value->>'$', CAST(value AS VARCHAR))
                FROM json_each(CASE WHEN json_valid(s.attributes->>'metadata')
                                     AND json_type(json(s.attributes->>'metadata')) = 'OBJECT'
                                    THEN json(s.attributes->>'metadata') END)
                UNION ALL
                SELECT 2, 'tags', CAST(s.attributes->'tag.tags' AS VARCHAR)
                WHERE json_type(s.attributes->'tag.tags') = 'ARRAY'
            )
            GROUP BY mk
        )
    ) AS metadata
    FROM (
        SELECT trace_id, span_id, attributes
        FROM oa_scoped_spans(rid)
        WHERE CAST(attributes AS VARCHAR) LIKE '%"ai.telemetry.metadata.%'
           OR CAST(attributes AS VARCHAR) LIKE '%"ai.settings.context.%'
           OR CAST(attributes AS VARCHAR) LIKE '%"metadata":%'
           OR CAST(attributes AS VARCHAR) LIKE '%"tag.tags":%'
        QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC, received_at DESC) = 1
    ) AS s
),
j AS (
    SELECT
        c.* REPLACE (
            coalesce(c.response_model, CASE WHEN c.base_category = 'provider_call' THEN n.response_model END)
                AS response_model,
            coalesce(c.input_tokens, CASE WHEN c.base_category = 'provider_call' THEN n.input_tokens END)
                AS input_tokens,
            coalesce(c.output_tokens, CASE WHEN c.base_category = 'provider_call' THEN n.output_tokens END)
                AS output_tokens,
            coalesce(c.reported_total_tokens,
                     CASE WHEN c.base_category = 'provider_call' THEN n.reported_total_tokens END)
                AS reported_total_tokens,
            coalesce(c.cache_read_tokens, CASE WHEN c.base_category = 'provider_call' THEN n.cache_read_tokens END)
                AS cache_read_tokens,
            coalesce(c.cache_creation_tokens,
                     CASE WHEN c.base_category = 'provider_call' THEN n.cache_creation_tokens END)
                AS cache_creation_tokens,
            coalesce(c.reasoning_tokens, CASE WHEN c.base_category = 'provider_call' THEN n.reasoning_tokens END)
                AS reasoning_tokens,
            coalesce(c.reported_cost_usd, CASE WHEN c.base_category = 'provider_call' THEN n.reported_cost_usd END)
                AS reported_cost_usd
        ),
        p.span_id IS NOT NULL AS parent_found,
        p.base_category AS parent_base_category,
        p.own_run_id AS parent_run_id,
        tr.trace_run_id,
        fb.span_id IS NOT NULL AS has_error_child,
        md.metadata,
        x.exception_type,
        x.exception_message,
        coalesce(x.from_log, false) AS failed_by_log,
        -- in error: its status (unless for a control-flow exception: oa_control_flow_exception), error.type, or a
        -- gen_ai.client.operation.exception record (written once here); an MCP client's tools/call also when the
        -- server's span of the call is (answered_in_error)
        (c.status_code = 'ERROR' AND NOT oa_control_flow_exception(x.exception_type))
            OR c.attr_error_type IS NOT NULL OR coalesce(x.from_log, false)
            OR ae.span_id IS NOT NULL AS in_error,
        ae.error_type AS answered_error_type,
        coalesce(ae.typed, false) AS answered_typed,
        ae.error_message AS answered_error_message,
        x.ev_guard
    FROM c
    LEFT JOIN parents AS p ON p.trace_id = c.trace_id AND p.span_id = c.parent_span_id
    LEFT JOIN trace_runs AS tr ON tr.trace_id = c.trace_id
    LEFT JOIN nested_usage AS n ON n.trace_id = c.trace_id AND n.parent_span_id = c.span_id
    LEFT JOIN exceptions AS x ON x.trace_id = c.trace_id AND x.span_id = c.span_id
    LEFT JOIN failure_below AS fb ON fb.trace_id = c.trace_id AND fb.span_id = c.span_id
    LEFT JOIN span_metadata AS md ON md.trace_id = c.trace_id AND md.span_id = c.span_id
    LEFT JOIN answered_in_error AS ae ON ae.trace_id = c.trace_id AND ae.span_id = c.span_id
        AND ae.jsonrpc_request_id = c.jsonrpc_request_id AND c.mcp_method = 'tools/call'
)
SELECT
    trace_id,
    span_id,
    parent_span_id,
    name AS span_name,
    kind AS span_kind,
    start_time,
    end_time,
    oa_ms(duration_ns) AS duration_ms,
    status_code,
    status_message,
    service_name,
    scope_name,
    convention,
    record_kind,
    -- a zero-length agent span right inside an agent span is an event of that agent written as a span (BeeAI's
    -- OpenInference instrumentation writes the agent's emitter events so, with its kind: `final_answer`), not a
    -- step: nothing takes no time (issue 32). A span in progress (a pending span standing for it) is not ended yet
    CASE WHEN base_category = 'agent' THEN (CASE WHEN NOT parent_found THEN 'flow_run'
                                                 WHEN parent_base_category = 'agent' AND duration_ns = 0
                                                      AND NOT in_progress THEN 'other'
                                                 ELSE 'step' END)
         ELSE base_category END AS category,
    coalesce(op_name, llm_request_type, lower(oi_kind)) AS operation,
    coalesce(own_run_id, parent_run_id, trace_run_id, trace_id) AS run_id,
    CASE
        WHEN own_run_id IS NOT NULL THEN 'attribute'
        WHEN parent_run_id IS NOT NULL THEN 'parent'
        WHEN trace_run_id IS NOT NULL THEN 'trace'
        ELSE 'trace_id'
    END AS run_id_source,
    attr_step_id,
    coalesce(attr_step_name, CASE WHEN base_category IN ('agent', 'step') THEN coalesce(agent_name, name) END)
        AS step_name,
    iteration,
    workflow_name,
    agent_name,
    conversation_id,
    session_id,
    provider,
    request_model,
    response_model,
    input_tokens,
    output_tokens,
    coalesce(reported_total_tokens, input_tokens + output_tokens) AS total_tokens,
    cache_read_tokens,
    cache_creation_tokens,
    reasoning_tokens,
    reported_cost_usd,
    retry_count,
    fallback_count,
    fallback_from_provider,
    fallback_from_model,
    coalesce(attr_tool_name, CASE WHEN base_category = 'tool_invocation' THEN name END) AS tool_name,
    tool_call_id,
    tool_type,
    tool_provider,
    data_source_id,
    skill_name,
    skill_version,
    attr_skill_invocation_id,
    -- guard facts: the span's attributes, else its gen_ai.guardrail.result event (span event, then log record)
    coalesce(attr_guard_name, ev_guard.name, CASE WHEN base_category = 'guard_result' THEN name END) AS guard_name,
    coalesce(guard_outcome, oa_guardrail_outcome(ev_guard.verdict)) AS guard_outcome,
    coalesce(guard_reason, ev_guard.reason) AS guard_reason,
    coalesce(guard_stage, ev_guard.stage) AS guard_stage,
    coalesce(guard_target_id, ev_guard.target_id) AS guard_target_id,
    -- the 2026 attributes few views read travel as one struct to the public views (fewer columns through the
    -- per-run pipeline: its planning time grows with them); classified_spans_for_run flattens it
    {'guard_action': coalesce(guard_action, ev_guard.action),
     'memory_store_id': memory_store_id, 'memory_record_id': memory_record_id,
     'memory_record_count': memory_record_count, 'prompt_name': prompt_name, 'prompt_version': prompt_version,
     -- streamed: as requested, else inferred from a time to first chunk (only a stream has one)
     'request_stream': coalesce(attr_request_stream, CASE WHEN time_to_first_chunk_ms IS NOT NULL THEN true END),
     'time_to_first_chunk_ms': time_to_first_chunk_ms,
     'response_id': response_id, 'a2a_task_id': a2a_task_id, 'a2a_task_state': a2a_task_state,
     -- the span's status message, else the message of its exception (span event, then log record)
     'error_message': CASE WHEN in_error
                           THEN coalesce(oa_text(status_message), exception_message, answered_error_message) END,
     -- error_type came from error.type or an exception (not guessed from a status message): runs prefer it
     'error_typed': in_error AND (attr_error_type IS NOT NULL OR exception_type IS NOT NULL OR answered_typed),
     -- an agent invocation (invoke_agent, OpenInference AGENT, traceloop agent, a Vercel AI SDK tool loop)
     'agent_invocation': base_category = 'agent',
     -- a span of work (issue 32: what makes a run; docs/views-runs.md "What is a run"): anything but bookkeeping —
     -- records (ours: claims, sources, receipt transitions, ...), an agent's creation and unclassified spans
     'work': base_category IN ('flow_run', 'agent', 'step', 'skill_invocation', 'provider_call', 'tool_invocation',
                               'retrieval', 'memory', 'guard_result', 'verifier_result')
             OR (base_category = 'handoff' AND record_kind IS DISTINCT FROM 'receipt_transition'),
     'metadata': metadata,
     'jsonrpc_request_id': jsonrpc_request_id, 'mcp_session_id': mcp_session_id,
     -- a span announced as started (a pending span) and not stored yet itself: docs/views-runs.md "Runs in
     -- progress"
     'in_progress': in_progress} AS genai_ext,
    coalesce(attr_verifier_name, CASE WHEN base_category = 'verifier_result' THEN name END) AS verifier_name,
    verifier_outcome,
    verifier_score,
    verifier_reason,
    verifier_target_id,
    budget_max_model_calls,
    budget_max_tool_calls,
    budget_max_cost_usd,
    attr_budget_exceeded AS budget_exceeded,
    attr_budget_exceeded_limits AS budget_exceeded_limits,
    artifact_id,
    artifact_version_id,
    artifact_version_number,
    receipt_transition,
    receipt_operation_id,
    receipt_handoff_id,
    receipt_expected_artifact,
    receipt_reason,
    receipt_waiting_for,
    receipt_artifact_ref,
    handoff_to,
    handoff_from,
    -- error.type; else the exception's type (span event, then gen_ai.client.operation.exception log record);
    -- else an MCP answer's error type (answered_in_error); else the type a status message starts with; else _OTHER
    coalesce(attr_error_type, CASE WHEN (status_code = 'ERROR' AND in_error) OR failed_by_log
        THEN coalesce(exception_type, answered_error_type, oa_error_type_of_message(status_message), '_OTHER')
        ELSE answered_error_type END) AS error_type,
    in_error AS is_error,
    in_error AND NOT has_error_child
        AS is_error_origin,
    parent_found,
    -- a span directly inside a span of the same counted category records the same work twice (two
    -- instrumentations, or a framework wrapper and its inner call): only the outer one is counted
    coalesce(base_category IN ('provider_call', 'retrieval', 'tool_invocation')
             AND parent_base_category = base_category, false) AS nested_call
FROM j;
