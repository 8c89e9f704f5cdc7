import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { BenchConfig } from '../../bench/config.ts';
import type { MachineInfo } from '../../bench/machine.ts';
import { type BenchResults, renderReport } from '../../bench/report.ts';

/** The machine, config and results a full `npm run bench -- --json=FILE` run wrote on 2026-11-30. */
interface RecordedRun {
  machine: Omit<MachineInfo, 'loadAfter'>;
  config: Omit<BenchConfig, 'only'> & { only: string[] };
  results: BenchResults;
}

async function recordedRun(): Promise<RecordedRun> {
  const text = await readFile(new URL('../fixtures/bench/full-run-results.json', import.meta.url), 'utf8');
  return JSON.parse(text) as RecordedRun;
}

function render(run: RecordedRun, results: BenchResults = run.results): string {
  return renderReport({
    config: { ...run.config, only: new Set(run.config.only) },
    machine: { ...run.machine, loadAfter: [2.5, 2.9, 2.8] },
    durationSeconds: 892,
    date: '2026-11-30T15:01:52.000Z',
    command: 'npm run bench',
    results,
  });
}

/** The row of the Goals table that starts with `goal`, as its cells. */
function goalRow(report: string, goal: string): string[] {
  const line = report.split('\n').find((row) => row.startsWith(`| ${goal}`));
  if (!line) throw new Error(`No goal row "${goal}"`);
  return line
    .split('|')
    .slice(1, -1)
    .map((cell) => cell.trim());
}

describe('BENCHMARKS.md as the benchmark run writes it', () => {
  it('has every table the issue asks for, from one run', async () => {
    const report = render(await recordedRun());
    for (const heading of [
      '## Machine and load',
      '## Goals',
      '## (a) Overhead per tool call',
      '## (b) Parallel vs sequential',
      '## (c) Turn latency vs conversation length',
      '## (d) History bytes per turn vs context size',
      '## (e) Throughput and worker memory',
      '### Idle open conversations',
      '## (f) Crash recovery',
      '## Tuning experiments (before → after)',
    ]) {
      expect(report).toContain(heading);
    }
  });

  it('judges each goal by the numbers of the run, and says which were missed', async () => {
    const report = render(await recordedRun());
    expect(goalRow(report, 'Overhead ≤ 10 ms')).toEqual([
      'Overhead ≤ 10 ms per sequential tool call (median)',
      '14.5 ms',
      '**missed**',
    ]);
    expect(goalRow(report, 'Parallel efficiency')[1]).toBe(
      '0.79 (batch 254 ms; the executions alone 225 ms)',
    );
    expect(goalRow(report, 'Turn 500')[2]).toBe('met');
    expect(goalRow(report, '≥ 50 turns/s')).toEqual([
      '≥ 50 turns/s with 100 concurrent conversations',
      '48.0 turns/s',
      '**missed**',
    ]);
  });

  it('calls 10,000 idle conversations measured only when that many ran, and extrapolated otherwise', async () => {
    const run = await recordedRun();
    const idle = run.results.idleMemory;
    if (!idle) throw new Error('The recorded run has no idle-memory result');
    expect(goalRow(render(run), '10,000 idle')[1]).toBe('1164 MB (measured)');

    const quick = render(run, {
      ...run.results,
      idleMemory: {
        ...idle,
        conversations: 1_000,
        firstConversations: 200,
        extrapolatedTenThousandMb: 2_333,
      },
    });
    expect(goalRow(quick, '10,000 idle')).toEqual([
      '10,000 idle open conversations within 2 GB of worker memory',
      '2333 MB (extrapolated from 1,000)',
      '**missed**',
    ]);
    expect(quick).toContain('extrapolated, not measured');
  });

  it('shows Actions per step against the design minimum, and the token delay against its goal', async () => {
    const run = await recordedRun();
    const report = render(run, {
      ...run.results,
      actions: {
        idleSeconds: 120,
        longToolSeconds: 60,
        rows: [
          {
            label: 'Text turn: one model call',
            minimum: 2,
            actions: 5,
            byType: {
              command_UpsertWorkflowSearchAttributes: 2,
              command_ScheduleActivityTask: 1,
              grpc_QueryWorkflow: 1,
              'message_UpdateWorkflowExecution:Acceptance': 1,
            },
          },
          { label: 'Idle open chat, per hour', minimum: 0, actions: 0, byType: {} },
        ],
      },
      tokenDelay: { turns: 10, tokens: 400, medianMs: 270, p99Ms: 800, maxMs: 900 },
    });
    expect(report).toContain('## (g) Temporal Cloud Actions per turn');
    expect(goalRow(report, 'Temporal Cloud Actions')).toEqual([
      'Temporal Cloud Actions per turn at the design minimum (activities + the prompt Update)',
      'Text turn: one model call: 5 (minimum 2)',
      '**missed**',
    ]);
    expect(report).toContain(
      '| Text turn: one model call | 5 | 2 | 3 | UpsertWorkflowSearchAttributes 2, ScheduleActivityTask 1, QueryWorkflow 1, UpdateWorkflowExecution:Acceptance 1 |',
    );
    expect(goalRow(report, 'Token to follower')).toEqual([
      'Token to follower ≤ 300 ms median, ≤ 750 ms p99',
      '270 ms median, 800 ms p99',
      '**missed**',
    ]);
  });
});

describe("BENCHMARKS.md's section on what each control adds to a turn", () => {
  it('shows each step beside the plain turn it extends, with what it added', async () => {
    const row = (label: string, against: string | null, actions: number, events: number, bytes: number) => ({
      label,
      against,
      actions,
      byType: { ScheduleActivityTask: actions },
      events,
      bytes,
    });
    const report = render(await recordedRun(), {
      featureCost: {
        rows: [
          row('Text turn, one model call', null, 5, 13, 3970),
          row("Text turn with the conversation's first compaction", 'Text turn, one model call', 9, 21, 6024),
        ],
      },
    });
    const line = report
      .split('\n')
      .find((text) => text.startsWith("| Text turn with the conversation's first"));
    expect(line?.split('|').map((cell) => cell.trim())).toEqual([
      '',
      "Text turn with the conversation's first compaction",
      '9',
      '21',
      '6024',
      'Text turn, one model call',
      '+4',
      '+8',
      '+2054',
      'ScheduleActivityTask 9',
      '',
    ]);
  });
});
