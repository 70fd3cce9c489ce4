-- What the maintained state has not folded in yet: rows per group commit past the watermark getvariable('oa_lo'),
-- and the oldest receive time among them (the lag). Zone maps on ingest_seq prune the scans to the newest rows.
SELECT seq, sum(n) AS n, min(received) AS received
FROM (
    SELECT ingest_seq AS seq, count(*) AS n, min(received_at) AS received
    FROM oa_store.spans WHERE ingest_seq > getvariable('oa_lo') GROUP BY ALL
    UNION ALL
    SELECT ingest_seq, count(*), NULL FROM oa_store.span_events WHERE ingest_seq > getvariable('oa_lo') GROUP BY ALL
    UNION ALL
    SELECT ingest_seq, count(*), min(received_at)
    FROM oa_store.logs WHERE ingest_seq > getvariable('oa_lo') GROUP BY ALL
)
GROUP BY seq
ORDER BY seq;
