// A Vercel AI SDK agent traced through the OpenTelemetry JS SDK, exporting OTLP/HTTP (protobuf) to otel_agent on
// loopback. Driven by tests/vercel_ai/test_vercel_ai.py against its fake OpenAI-compatible server.
//
//   node agent.mjs <style> <otlp traces url> <openai base url>
//
// style "v6": the AI SDK's v6 line with `experimental_telemetry` (the `ai.*` spans: ai.generateText,
//   ai.generateText.doGenerate, ai.toolCall, ai.streamText.doStream, ...), through @ai-sdk/openai v3.
// style "v7": the v7 line with the GenAI-convention integration `@ai-sdk/otel` (registerTelemetry).
//
// Prints one JSON line: the ground truth the SDK itself reports (usage, steps, tool calls, errors).
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

const [style, tracesUrl, baseURL] = process.argv.slice(2);

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const provider = new TracerProvider({
  resource: resourceFromAttributes({ 'service.name': `vercel-ai-${style}` }),
  spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: tracesUrl }) })],
});
const tracer = provider.getTracer('vercel-ai-scenario');

const truth = { style, runs: [] };

function usageOf(u) {
  return { input: u?.inputTokens ?? u?.promptTokens ?? null, output: u?.outputTokens ?? u?.completionTokens ?? null };
}

async function main() {
  let ai;
  let openai;
  let telemetry;
  if (style === 'v6') {
    ai = await import('ai-v6');
    const { createOpenAI } = await import('@ai-sdk/openai-v3');
    openai = createOpenAI({ baseURL, apiKey: 'test-key' });
    telemetry = (functionId, metadata) => ({
      experimental_telemetry: { isEnabled: true, functionId, metadata, tracer },
    });
  } else {
    ai = await import('ai');
    const { createOpenAI } = await import('@ai-sdk/openai');
    const { OpenTelemetry } = await import('@ai-sdk/otel');
    openai = createOpenAI({ baseURL, apiKey: 'test-key' });
    ai.registerTelemetry(new OpenTelemetry({ tracer }));
    telemetry = (functionId, metadata) => ({ experimental_telemetry: { isEnabled: true, functionId, metadata } });
  }
  const { generateText, streamText, tool, jsonSchema, stepCountIs } = ai;
  const weather = tool({
    description: 'The weather in a city',
    inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
    execute: async ({ city }) => `sunny in ${city}`,
  });
  const broken = tool({
    description: 'A lookup that fails',
    inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
    execute: async () => {
      throw new TypeError('lookup failed');
    },
  });

  // 1. a tool loop: one tool call, then an answer
  const ok = await generateText({
    model: openai.chat('gpt-4o-mini'),
    prompt: 'Weather in Paris?',
    tools: { get_weather: weather },
    stopWhen: stepCountIs(4),
    ...telemetry('weather-agent', { user_id: 'u-42', tenant: 'acme' }),
  });
  const okToolCalls = ok.steps.reduce((n, s) => n + s.toolCalls.length, 0);
  truth.runs.push({
    name: 'weather-agent',
    text: ok.text,
    steps: ok.steps.length,
    tool_calls: okToolCalls,
    usage: usageOf(ok.totalUsage ?? ok.usage),
    error: null,
  });

  // 2. a streamed answer (time to first chunk)
  const streamed = streamText({
    model: openai.chat('gpt-4o-mini'),
    prompt: 'Say hello.',
    ...telemetry('stream-agent', { user_id: 'u-7' }),
  });
  let text = '';
  for await (const delta of streamed.textStream) text += delta;
  truth.runs.push({
    name: 'stream-agent',
    text,
    steps: (await streamed.steps).length,
    tool_calls: 0,
    usage: usageOf(await streamed.totalUsage),
    error: null,
  });

  // 3. a tool that throws: the SDK reports the tool error to the model, which then answers
  const failing = await generateText({
    model: openai.chat('gpt-4o-mini'),
    prompt: 'Look up Paris.',
    tools: { lookup: broken },
    stopWhen: stepCountIs(4),
    ...telemetry('failing-agent', { user_id: 'u-9' }),
  });
  const errors = failing.steps.flatMap((s) => s.content.filter((c) => c.type === 'tool-error'));
  truth.runs.push({
    name: 'failing-agent',
    text: failing.text,
    steps: failing.steps.length,
    tool_calls: failing.steps.reduce((n, s) => n + s.toolCalls.length, 0),
    usage: usageOf(failing.totalUsage ?? failing.usage),
    error: errors.length ? errors[0].error?.name ?? 'Error' : null,
  });
}

try {
  await main();
} finally {
  await provider.forceFlush();
  await provider.shutdown();
}
process.stdout.write(JSON.stringify(truth) + '\n');
