-- alert_events: the lifecycle of every alert, a product table (append-only, written by the receiver's alert
-- evaluator (otel_agent/alerts/evaluator.py), `otel-agent alerts ack|silence` and the console, never by agents'
-- spans). Part of the versioned schema (since version 6). An alert is one (rule, alert_key): it is firing from
-- its latest `firing` event until a later `resolved` one; `acknowledged`, `silenced` and `unsilenced` events are
-- people's decisions about it (the review role), recorded the same way. Nothing updates or deletes a row.
CREATE TABLE IF NOT EXISTS alert_events (
    event_id VARCHAR NOT NULL,         -- alev_<time-ordered hex>
    rule VARCHAR NOT NULL,             -- the rule's name in the rules file
    alert_key VARCHAR NOT NULL,        -- what fired (an operation id, a run id, a provider/model; '*': every key of the rule, for a silence)
    event VARCHAR NOT NULL,            -- firing | resolved | acknowledged | silenced | unsilenced
    rule_kind VARCHAR,                 -- receipt | run_abandoned | error_rate | cost | budget_exceeded | guard_blocks | sql
    severity VARCHAR,                  -- info | warning | critical (the rule's)
    summary VARCHAR,                   -- one line saying what is wrong (firing), or why (a person's reason)
    evidence JSON,                     -- the row that fired it, as the rule's query returned it (firing); the last one seen (resolved)
    event_at TIMESTAMPTZ NOT NULL,     -- when the event was recorded
    actor VARCHAR,                     -- who acknowledged / silenced (NULL for the evaluator's events)
    principal VARCHAR,                 -- the authenticated principal that wrote it through the receiver (NULL: direct/no auth)
    silenced_until TIMESTAMPTZ         -- for a silence: until when no notification is sent
);
-- alert_deliveries: every attempt to deliver an alert event to the webhook (append-only, written by the
-- delivery thread of otel_agent/alerts/webhook.py). Part of the versioned schema (since version 6).
CREATE TABLE IF NOT EXISTS alert_deliveries (
    event_id VARCHAR NOT NULL,         -- the alert_events row delivered
    attempt INTEGER NOT NULL,          -- 1, 2, … (retries back off exponentially)
    url VARCHAR NOT NULL,              -- where it was POSTed
    attempted_at TIMESTAMPTZ NOT NULL,
    status_code INTEGER,               -- the HTTP status answered (NULL: no answer: refused, timed out)
    error VARCHAR,                     -- why it failed (NULL when delivered)
    duration_ms DOUBLE,                -- how long the attempt took
    delivered BOOLEAN NOT NULL         -- a 2xx answer: no further attempt
);
