-- runs_list: one page of the Runs page (read/runs.py search_runs: the console's Runs page, MCP search_runs).
-- Runs over the runs view when it reads the maintained rows (a page costs what it shows), else over the console's
-- snapshot of it (runs_snapshot.sql); through the page's filter (runs_filter.sql).
-- Parameters: $status, $service, $text (substring of run id, workflow or agent name; case-insensitive),
-- $t0, $t1 (start time window, either NULL), $agent, $min_cost, $only_errors, $sort (start|duration|cost|calls|tokens|errors), $desc,
-- $limit, $offset. Unpriced cost stays NULL (the page shows "unpriced", never 0).
SELECT run_id, workflow_name, agent_name, service_name, status, error_type, trace_id, start_time, duration_ms,
       steps, provider_calls, tool_invocations, input_tokens, output_tokens, cost_usd, unpriced_calls, errors,
       guard_blocks, budget_exceeded, handoffs, span_count, last_activity_time, current_step
FROM runs_matching($status, $service, $text, $t0, $t1, $agent, $min_cost, $only_errors, $run)
ORDER BY
    CASE WHEN $desc THEN (CASE $sort WHEN 'duration' THEN duration_ms WHEN 'cost' THEN cost_usd
        WHEN 'calls' THEN provider_calls WHEN 'tokens' THEN coalesce(input_tokens, 0) + coalesce(output_tokens, 0)
        WHEN 'errors' THEN errors ELSE epoch_ns(start_time) END) END DESC NULLS LAST,
    CASE WHEN NOT $desc THEN (CASE $sort WHEN 'duration' THEN duration_ms WHEN 'cost' THEN cost_usd
        WHEN 'calls' THEN provider_calls WHEN 'tokens' THEN coalesce(input_tokens, 0) + coalesce(output_tokens, 0)
        WHEN 'errors' THEN errors ELSE epoch_ns(start_time) END) END ASC NULLS LAST,
    start_time DESC, run_id
LIMIT $limit OFFSET $offset
