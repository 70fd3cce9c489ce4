-- proxy_health: the LLM proxy's requests per client, provider and model in [$t0, $t1) (proxy_health_between), for
-- the Observability page.
SELECT * FROM proxy_health_between($t0::TIMESTAMP, $t1::TIMESTAMP)
ORDER BY requests DESC, client, provider, model LIMIT 200
