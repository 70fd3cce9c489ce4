-- skills_health: skill health in [$t0, $t1) (skill_health_between).
SELECT * FROM skill_health_between($t0::TIMESTAMP, $t1::TIMESTAMP) ORDER BY invocations DESC, skill_ref LIMIT 200
