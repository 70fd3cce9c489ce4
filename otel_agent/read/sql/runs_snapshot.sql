-- runs_snapshot: every run with the columns the Runs page shows, copied into the console's in-memory snapshot
-- table `runs` (console/store.py Snapshot): runs_list.sql, runs_chart.sql and runs_services.sql run over that
-- copy, so sorting and filtering by derived values does not classify the whole store on every page view.
SELECT run_id, workflow_name, agent_name, service_name, status, error_type, trace_id, start_time, duration_ms,
       steps, provider_calls, tool_invocations, input_tokens, output_tokens, cost_usd, unpriced_calls, errors,
       guard_blocks, budget_exceeded, handoffs, span_count, last_activity_time, current_step
FROM runs
