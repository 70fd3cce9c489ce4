-- run_cost: cost_breakdown_for_run rows of one run, grouped on the Run page by step, provider, skill and tool.
SELECT step_name, skill_ref, item_type, provider, model, tool_name, calls, input_tokens, output_tokens, cost_usd,
       priced_calls, unpriced_calls
FROM cost_breakdown_for_run($run_id)
