import type { EvalToolCall } from './keptCases.ts';
import type { EvalCaseReport, EvalReport, EvalTurnReport } from './report.ts';

const escaped = (text: string): string => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/**
 * The words of `before` and `after` marked: `<del>` for words only the old reply has, `<ins>` for
 * words only the new one has (a longest common subsequence of words).
 */
export function wordDiff(before: string, after: string): { old: string; new: string } {
  const a = before.split(/(\s+)/);
  const b = after.split(/(\s+)/);
  const common: number[][] = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      (common[i] as number[])[j] =
        a[i] === b[j]
          ? (common[i + 1]?.[j + 1] ?? 0) + 1
          : Math.max(common[i + 1]?.[j] ?? 0, common[i]?.[j + 1] ?? 0);
  const old: string[] = [];
  const next: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      old.push(escaped(a[i++] as string));
      next.push(escaped(b[j++] as string));
    } else if (j < b.length && (i >= a.length || (common[i]?.[j + 1] ?? 0) >= (common[i + 1]?.[j] ?? 0))) {
      next.push(`<ins>${escaped(b[j++] as string)}</ins>`);
    } else {
      old.push(`<del>${escaped(a[i++] as string)}</del>`);
    }
  }
  return { old: old.join(''), new: next.join('') };
}

function callList(calls: readonly EvalToolCall[]): string {
  if (calls.length === 0) return '';
  const items = calls.map(
    (call) =>
      `<li class="call ${call.answer ?? ''}">${escaped(call.toolName)}(${escaped(JSON.stringify(call.args))})${
        call.answer === 'diverged' ? ' <b>diverged</b>' : ''
      }</li>`,
  );
  return `<ul>${items.join('')}</ul>`;
}

function turnRow(turn: EvalTurnReport): string {
  const diff = wordDiff(turn.old.reply, turn.new.reply);
  return `<tr><td class="user">${turn.turn}. ${turn.user.map(escaped).join('<br>')}</td>
<td class="old">${diff.old}${callList(turn.old.toolCalls)}</td>
<td class="new">${diff.new}${callList(turn.new.toolCalls)}${turn.new.error ? `<p class="error">${escaped(turn.new.error)}</p>` : ''}</td></tr>`;
}

function caseSection(each: EvalCaseReport): string {
  const verdict = each.regression ? 'regression' : each.passed ? 'pass' : 'fail';
  const failures = each.failures.map((text) => `<li>${escaped(text)}</li>`).join('');
  return `<section class="case ${verdict}" id="case-${escaped(each.caseId)}">
<h2><span class="verdict">${verdict}</span> ${escaped(each.caseId)}</h2>
${failures ? `<ul class="failures">${failures}</ul>` : ''}
<p class="figures">tokens ${each.old.tokens} → ${each.new.tokens} · cost ${each.old.cost.toFixed(4)} → ${each.new.cost.toFixed(4)} · Actions ${each.old.actions} → ${each.new.actions} · turn time ${each.old.workMs} → ${each.new.workMs} ms · latency ${each.new.latencyMs} ms</p>
<table><thead><tr><th>user</th><th>old</th><th>new</th></tr></thead><tbody>
${each.turns.map(turnRow).join('\n')}
</tbody></table></section>`;
}

const STYLE = `body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;width:100%}
td,th{border:1px solid #ddd;padding:.4em;vertical-align:top;text-align:left}th{background:#f4f4f4}
ins{background:#d4f8d4;text-decoration:none}del{background:#fbd4d4}.verdict{text-transform:uppercase;font-size:.8em;padding:.1em .4em;border-radius:3px}
.pass .verdict{background:#d4f8d4}.fail .verdict{background:#fbd4d4}.regression .verdict{background:#c00;color:#fff}
.call.diverged{color:#c00}.user{width:20%}.error{color:#c00}`;

/** The report as one self-contained HTML page: the totals, then each case's turns side by side. */
export function htmlReport(report: EvalReport): string {
  const { summary } = report;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>eval ${escaped(report.runId)}</title><style>${STYLE}</style></head>
<body><h1>eval ${escaped(report.runId)} on ${escaped(report.candidate)}</h1>
<p id="summary">${summary.passed}/${summary.cases} passed (${(summary.passRate * 100).toFixed(1)}%) · ${summary.regressions} regressions${
    report.baseline ? ` against ${escaped(report.baseline)}` : ''
  } · ${summary.diverged} diverged calls · tokens ${summary.old.tokens} → ${summary.new.tokens} · cost ${summary.old.cost.toFixed(4)} → ${summary.new.cost.toFixed(4)} · Actions ${summary.old.actions} → ${summary.new.actions} · turn time ${summary.old.workMs} → ${summary.new.workMs} ms · latency ${summary.new.latencyMs} ms</p>
${report.cases.map(caseSection).join('\n')}
</body></html>`;
}
