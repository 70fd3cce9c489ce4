-- tools_usage: tool usage in [$t0, $t1) (tool_usage_between).
SELECT * FROM tool_usage_between($t0::TIMESTAMP, $t1::TIMESTAMP) ORDER BY calls DESC, tool_name LIMIT 200
