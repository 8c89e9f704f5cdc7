// Draws one trace that the OpenTelemetry Collector's file exporter wrote (OTLP JSON, a request a
// line) as a waterfall and screenshots it with Debian's Chromium: docs/tracing.md's docs/images/trace.png.
// No trace UI runs here, so this page stands in for one (Jaeger's UI is not in its Go module).
//   YIEM_TRACE_SPANS_FILE=/tmp/spans.jsonl npx vitest run test/integration/genaiTraces.test.ts
//   node scripts/tracePicture.mjs /tmp/spans.jsonl docs/images/trace.png
// The trace drawn is the one with a tool call in it.
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [spansFile, pngFile = 'docs/images/trace.png'] = process.argv.slice(2);
if (!spansFile) throw new Error('usage: node scripts/tracePicture.mjs SPANS.jsonl [OUT.png]');

const value = (v) =>
  v.stringValue ??
  (v.intValue !== undefined
    ? Number(v.intValue)
    : (v.doubleValue ?? v.boolValue ?? v.arrayValue?.values?.map(value)));
const spans = readFileSync(spansFile, 'utf8')
  .split('\n')
  .filter((line) => line.trim())
  .flatMap((line) => JSON.parse(line).resourceSpans)
  .flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans ?? []))
  .map((span) => ({
    ...span,
    // Microseconds: nanoseconds since 1970 are past a double's exact integers.
    start: Number(BigInt(span.startTimeUnixNano) / 1000n),
    end: Number(BigInt(span.endTimeUnixNano) / 1000n),
    attributes: Object.fromEntries((span.attributes ?? []).map(({ key, value: v }) => [key, value(v)])),
  }));
const traceId = spans.find((span) => span.name.startsWith('execute_tool'))?.traceId;
if (!traceId) throw new Error(`no trace with an execute_tool span in ${spansFile}`);
const trace = spans.filter((span) => span.traceId === traceId);
const byId = new Map(trace.map((span) => [span.spanId, span]));
const children = (id) =>
  trace.filter((span) => (span.parentSpanId || '') === id).sort((a, b) => (a.start < b.start ? -1 : 1));
const roots = trace.filter((span) => !byId.has(span.parentSpanId || ''));
const rows = [];
const walk = (span, depth) => {
  rows.push({ span, depth });
  for (const child of children(span.spanId)) walk(child, depth + 1);
};
for (const root of roots) walk(root, 0);

const t0 = Math.min(...trace.map((span) => span.start));
const total = Math.max(...trace.map((span) => span.end)) - t0 || 1;
const shown = [
  'gen_ai.operation.name',
  'gen_ai.request.model',
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.output_tokens',
  'gen_ai.response.finish_reasons',
  'gen_ai.tool.name',
  'gen_ai.tool.call.id',
  'yiem.attempt',
  'yiem.turn',
  'yiem.cost',
];
const escapeHtml = (text) =>
  String(text).replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]);
const color = (span) =>
  span.status?.code === 2
    ? '#d9534f'
    : ({ invoke_agent: '#7b61ff', chat: '#1f9d55', execute_tool: '#e08e0b' }[
        span.attributes['gen_ai.operation.name']
      ] ?? '#6c8ebf');
const html = `<!doctype html><meta charset="utf-8"><style>
body{font:13px system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:16px;margin:0 0 4px} .sub{color:#666;margin-bottom:12px}
.row{display:grid;grid-template-columns:440px 1fr;align-items:center;border-bottom:1px solid #eee;min-height:34px}
.name{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.bar{position:relative;height:30px}
.b{position:absolute;top:4px;height:10px;border-radius:2px}
.attrs{position:absolute;top:16px;font-size:10.5px;color:#555;white-space:nowrap}
.ms{font-size:10.5px;color:#888;margin-left:4px}
</style><h1>Trace ${traceId}</h1>
<div class="sub">${trace.length} spans received by the OpenTelemetry Collector (OTLP/HTTP, file exporter), service <b>yiem-agent</b>; drawn by scripts/tracePicture.mjs</div>
${rows
  .map(({ span, depth }) => {
    const left = ((span.start - t0) / total) * 100;
    const width = Math.max(((span.end - span.start) / total) * 100, 0.3);
    const ms = ((span.end - span.start) / 1e3).toFixed(1);
    const attrs = shown
      .filter((key) => span.attributes[key] !== undefined)
      .map((key) => `${key.replace('gen_ai.', '')}=${escapeHtml(JSON.stringify(span.attributes[key]))}`)
      .join('  ');
    const status =
      span.status?.code === 2
        ? ` <span style="color:#d9534f">✖ ${escapeHtml(span.status.message ?? '')}</span>`
        : '';
    return `<div class="row"><div class="name" style="padding-left:${depth * 14}px">${escapeHtml(span.name)}<span class="ms">${ms} ms</span>${status}</div>
<div class="bar"><div class="b" style="left:${left}%;width:${width}%;background:${color(span)}"></div><div class="attrs" style="left:${Math.min(left, 38)}%">${attrs}</div></div></div>`;
  })
  .join('\n')}`;

const page = path.join(os.tmpdir(), `yiem-trace-${process.pid}.html`);
writeFileSync(page, html);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
try {
  const tab = await browser.newPage({ viewport: { width: 1400, height: 200 } });
  await tab.goto(`file://${page}`);
  await tab.screenshot({ path: pngFile, fullPage: true });
} finally {
  await browser.close();
}
console.log(`${pngFile}: ${trace.length} spans of trace ${traceId}`);
