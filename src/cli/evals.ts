import { readFile, writeFile } from 'node:fs/promises';
import { htmlReport } from '../client/evals/htmlReport.ts';
import { type EvalReport, terminalSummary } from '../client/evals/report.ts';
import { type RunEvalOptions, runEval } from '../client/evals/runEval.ts';
import type { EvalExpectations, EvalJudge } from '../client/evals/scores.ts';
import { connectedClient } from './commands.ts';
import { type ConnectionFlags, connectionConfig } from './config.ts';
import { cliEnvironment } from './environment.ts';

/** The flags of `yiem eval`. */
export interface EvalFlags extends ConnectionFlags {
  query?: string;
  histories?: string[];
  mode: string;
  expectations?: string;
  standIns?: string;
  allowAtMostOnce?: boolean;
  judgeUrl?: string;
  judgeModel?: string;
  rubric?: string;
  concurrency: string;
  baseline?: string;
  json?: string;
  html?: string;
  failUnder?: string;
  runId?: string;
  system?: string;
  model?: string;
}

async function readJson<T>(file: string, what: string): Promise<T> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch (error) {
    throw new Error(`${what} ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function count(text: string, flag: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1)
    throw new Error(`${flag} ${text}: expected a whole number above 0`);
  return Number(text);
}

/** The judge of `--judge-url` and `--judge-model`; its key from `YIEM_JUDGE_API_KEY`, else `OPENAI_API_KEY`. */
function judgeOf(flags: EvalFlags): EvalJudge | undefined {
  if (!flags.judgeUrl && !flags.judgeModel) return undefined;
  if (!flags.judgeUrl || !flags.judgeModel) throw new Error('--judge-url and --judge-model go together');
  const env = cliEnvironment();
  const apiKey = env.YIEM_JUDGE_API_KEY || env.OPENAI_API_KEY;
  return {
    baseURL: flags.judgeUrl,
    model: flags.judgeModel,
    ...(apiKey ? { apiKey } : {}),
    ...(flags.rubric ? { rubric: flags.rubric } : {}),
  };
}

async function evalOptions(ids: string[], flags: EvalFlags, taskQueue: string): Promise<RunEvalOptions> {
  if (flags.mode !== 'recorded' && flags.mode !== 'live')
    throw new Error(`--mode ${flags.mode}: expected recorded or live`);
  const judge = judgeOf(flags);
  return {
    conversations: ids,
    ...(flags.query ? { query: flags.query } : {}),
    ...(flags.histories ? { histories: flags.histories } : {}),
    candidate: {
      taskQueue,
      ...(flags.system !== undefined ? { systemPrompt: flags.system } : {}),
      ...(flags.model !== undefined ? { model: flags.model } : {}),
    },
    mode: flags.mode,
    ...(flags.allowAtMostOnce ? { allowAtMostOnce: true } : {}),
    concurrency: count(flags.concurrency, '--concurrency'),
    ...(flags.expectations
      ? { expectations: await readJson<EvalExpectations>(flags.expectations, 'Expectations') }
      : {}),
    ...(flags.standIns
      ? { standIns: await readJson<Record<string, string>>(flags.standIns, 'Stand-ins') }
      : {}),
    ...(flags.baseline ? { baseline: await readJson<EvalReport>(flags.baseline, 'Baseline report') } : {}),
    ...(judge ? { judge } : {}),
    ...(flags.runId ? { runId: flags.runId } : {}),
    onProgress: (progress) =>
      process.stderr.write(`${progress.finished.length}/${progress.total} cases replayed\n`),
  };
}

/**
 * `yiem eval`: replays kept conversations on the agent of `--task-queue`, prints the summary, writes
 * the JSON and HTML reports, and exits 1 when the pass rate is under `--fail-under`.
 */
export async function evalCommand(ids: string[], flags: EvalFlags): Promise<void> {
  const failUnder = flags.failUnder === undefined ? undefined : Number(flags.failUnder);
  if (failUnder !== undefined && !(failUnder >= 0 && failUnder <= 1))
    throw new Error(`--fail-under ${flags.failUnder}: expected a pass rate from 0 to 1, e.g. 0.9`);
  const config = connectionConfig(flags);
  const options = await evalOptions(ids, flags, config.taskQueue);
  const client = await connectedClient(config);
  try {
    const report = await runEval(client, options);
    console.log(terminalSummary(report));
    if (flags.json) await writeFile(flags.json, `${JSON.stringify(report, null, 2)}\n`);
    if (flags.html) await writeFile(flags.html, htmlReport(report));
    if (failUnder !== undefined && report.summary.passRate < failUnder) {
      console.log(`Pass rate ${report.summary.passRate.toFixed(3)} is under --fail-under ${failUnder}.`);
      process.exitCode = 1;
    }
  } finally {
    await client.close();
  }
}
