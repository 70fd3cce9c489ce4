-- Scalar helpers used by the run views. Prefix oa_ marks them as internal (they may change).

-- An attribute value (extracted as text) as a non-negative integer count; NULL when absent, negative (-0.4
-- included) or not a number ('12', '12.0' and '1.2e1' read 12). v appears once: macro arguments are expanded where
-- they appear. Through UBIGINT, which refuses a negative value, not nullif/greatest: a CASE costs the planner
-- several times more, and the classification has a dozen counts (docs/views-runs.md, "Performance").
CREATE OR REPLACE MACRO oa_count(v) AS TRY_CAST(TRY_CAST(v AS UBIGINT) AS BIGINT);

-- Text, with '' treated as absent. (The attributes the classification reads are cleaned once instead: see
-- oa_attribute_text in 020_span_fields.sql.)
CREATE OR REPLACE MACRO oa_text(v) AS nullif(v, '');

-- The key a model name is priced by: lower case, without a routing prefix ('openai/gpt-4o',
-- 'models/gemini-2.0-flash'), a Bedrock vendor/region prefix or version suffix
-- ('us.anthropic.claude-3-5-sonnet-20240620-v1:0'), or a snapshot date
-- ('gpt-4o-2024-08-06', 'claude-3-5-sonnet-20241022', 'claude-3-5-sonnet@20241022', 'gpt-4-0613').
CREATE OR REPLACE MACRO oa_model_key(m) AS
    regexp_replace(
        regexp_replace(
            regexp_replace(
                regexp_replace(lower(trim(m)), '^.*/', ''),
                '^((us|eu|apac|global)\.)?(anthropic|meta|amazon|mistral|cohere|ai21|deepseek)\.', ''),
            '-v\d+(:\d+)?$', ''),
        '([-@](\d{4}-\d{2}-\d{2}|\d{8})|-\d{4})$', '');

-- The provider family a provider name is priced under: hosted variants of one vendor's models share its
-- prices (Azure OpenAI -> openai, Vertex/Gemini -> google); NULL (unknown, or a multi-vendor host such as
-- Bedrock) matches by model name alone.
CREATE OR REPLACE MACRO oa_price_provider(p) AS
    CASE
        WHEN p IS NULL OR trim(p) = '' THEN NULL
        WHEN lower(p) IN ('openai', 'azure.ai.openai', 'az.ai.openai', 'azure_openai', 'azure', 'azure.openai')
            THEN 'openai'
        WHEN lower(p) IN ('anthropic', 'claude') THEN 'anthropic'
        WHEN lower(p) IN ('gcp.gemini', 'gcp.vertex_ai', 'gcp.gen_ai', 'vertex_ai', 'vertexai', 'google',
                          'gemini', 'google_genai', 'google.genai', 'google_ai_studio') THEN 'google'
        WHEN lower(p) IN ('deepseek') THEN 'deepseek'
        WHEN lower(p) IN ('mistral_ai', 'mistralai', 'mistral') THEN 'mistral_ai'
        WHEN lower(p) IN ('aws.bedrock', 'bedrock', 'aws_bedrock', 'openrouter', 'litellm') THEN NULL
        ELSE lower(p)
    END;

-- A provider name as the views report it: lower case, without the API surface some instrumentations append to it
-- (the Vercel AI SDK's provider ids 'openai.chat', 'openai.responses', 'anthropic.messages',
-- 'google.generative-ai' arrive as gen_ai.system): 'openai', 'anthropic', 'google'. No registered
-- gen_ai.provider.name value ends with one of these suffixes, so the conventions' names are kept as they are.
CREATE OR REPLACE MACRO oa_provider_name(p) AS
    regexp_replace(lower(p), '\.(chat|responses|completion|completions|messages|embedding|embeddings|generative-ai|image|transcription|speech|rerank|reranking)$', '');

-- Span duration in milliseconds.
CREATE OR REPLACE MACRO oa_ms(ns) AS ns / 1e6;

-- An error type read from a span status message, for spans in ERROR that carry neither error.type nor an
-- exception event: the exception class the message starts with ("KeyError: 'x'", "ValueError('x')"), else the
-- message itself (at most 128 characters); NULL for an empty message.
CREATE OR REPLACE MACRO oa_error_type_of_message(m) AS
    -- nullif, not oa_text: each use of a macro argument is expanded again (one regular expression, not two)
    coalesce(nullif(regexp_extract(m, '^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*[(:]', 1), ''), nullif(left(trim(m), 128), ''));

-- An exception type that signals control flow, not a failure (issue 32): the end of an iterator or generator, an
-- empty or shut-down queue. Libraries that trace every function record them as they pass (a2a-sdk 0.3's
-- a2a.utils.telemetry sets its event queue's dequeue span in error with 'QueueEmpty: Queue is closed.' when a
-- request's queue closes; a2a-sdk 1.x no longer does for its QueueShutDown). Matched on the type's last name (asyncio.QueueEmpty is
-- 'asyncio.queues.QueueEmpty'), and queue.Empty by its module ('_queue.Empty'): 'Empty' alone is too common a name.
CREATE OR REPLACE MACRO oa_control_flow_exception(t) AS
    coalesce(regexp_matches(t, '(^|\.)(StopIteration|StopAsyncIteration|GeneratorExit|QueueEmpty|QueueShutDown)$')
             OR t IN ('queue.Empty', '_queue.Empty'), false);

-- gen_ai.guardrail.verdict.type as a guard outcome: a denying verdict is 'blocked', an allowing one 'passed',
-- anything else is kept as given (lower case). The conventions forbid inferring a verdict: none is invented.
CREATE OR REPLACE MACRO oa_guardrail_outcome(v) AS
    CASE
        WHEN lower(v) IN ('deny', 'denied', 'block', 'blocked', 'reject', 'rejected') THEN 'blocked'
        WHEN lower(v) IN ('allow', 'allowed', 'pass', 'passed') THEN 'passed'
        ELSE lower(v)
    END;

-- A log record's time: its own, else (unset: 0 on the wire, 1970 stored) when the collector observed it, as the
-- OpenTelemetry logs data model says.
CREATE OR REPLACE MACRO oa_log_time(t, observed) AS CASE WHEN epoch_ns(t) > 0 THEN t ELSE observed END;

-- A span announcing that another span has started (Logfire's "pending span", which otel_agent.instrument emits
-- too: docs/views-runs.md "Runs in progress"): attribute logfire.span_type = 'pending_span', its parent the span it
-- announces, logfire.pending_parent_id that span's parent (all zeros for a root), start = end = its start. Found on
-- the JSON text (a substring test, no parse): only such spans are parsed further.
CREATE OR REPLACE MACRO oa_is_pending(doc) AS
    contains(CAST(doc AS VARCHAR), '"logfire.span_type":"pending_span"');
