-- providers_health: provider / model health in [$t0, $t1) (provider_health_between), for the Observability page.
SELECT * FROM provider_health_between($t0::TIMESTAMP, $t1::TIMESTAMP) ORDER BY calls DESC, provider, model LIMIT 200
