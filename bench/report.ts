import type { BenchConfig } from './config.ts';
import type { MachineInfo, SectionLoad } from './machine.ts';
import {
  type ActionRow,
  type ActionsResult,
  FOLLOWED_TOOL_TURN,
  LOCAL_MODEL_CALLS,
  LOCAL_TOOL_TURN,
  ON_S3_STORE,
  TEXT_TURN,
  TOOL_TURN,
  WITHOUT_LIVE_SEARCH_ATTRIBUTES,
} from './scenarios/actionsPerTurn.ts';
import type { CrashRecoveryResult } from './scenarios/crashRecovery.ts';
import { CRASH_HEARTBEAT_TIMEOUT, CRASH_TOOL_MS, KILL_AFTER_MS } from './scenarios/crashRecovery.ts';
import type { FeatureCostResult, FeatureCostRow } from './scenarios/featureCost.ts';
import {
  ALONE_TURNS,
  type BystanderRun,
  CONSOLE_FLOOD_LINES,
  FLOOD_BYSTANDER_GOAL_MS,
  type FloodResult,
  type TurnTimes,
} from './scenarios/flood.ts';
import type { FloorResult } from './scenarios/floor.ts';
import { HISTORY_GOAL_BYTES, type HistoryBytesPoint, MESSAGE_BYTES } from './scenarios/historyBytes.ts';
import type { IdleMemoryResult } from './scenarios/idleMemory.ts';
import {
  LARGE_MESSAGE_BYTES,
  type LargeContentResult,
  TOOL_EVERY,
  TOOL_RESULT_KB,
  TURNS_PER_RUN,
} from './scenarios/largeContent.ts';
import { LARGE_RESULT_KB, type LargeResultPoint } from './scenarios/largeResults.ts';
import { OVERHEAD_TOOL_CALLS, type OverheadResult } from './scenarios/overhead.ts';
import { PARALLEL_TOOLS, type ParallelResult, parallelEfficiency } from './scenarios/parallel.ts';
import type { LocalModelCallsSide, PeerResult } from './scenarios/peer.ts';
import type { RateLimitResult } from './scenarios/rateLimits.ts';
import type { ThroughputLevel, ThroughputResult } from './scenarios/throughput.ts';
import { TOKEN_DELAY_GOAL, type TokenDelayResult, type TokenDelayStore } from './scenarios/tokenDelay.ts';
import type { TurnLatencyResult } from './scenarios/turnLatency.ts';
import { formatSummary as fmt, type Summary } from './stats.ts';

export interface BenchResults {
  overhead?: OverheadResult;
  parallel?: ParallelResult;
  turnLatency?: TurnLatencyResult;
  historyBytes?: HistoryBytesPoint[];
  throughput?: ThroughputResult;
  idleMemory?: IdleMemoryResult;
  crashRecovery?: CrashRecoveryResult;
  actions?: ActionsResult;
  featureCost?: FeatureCostResult;
  tokenDelay?: TokenDelayResult;
  largeContent?: LargeContentResult;
  largeResults?: LargeResultPoint[];
  flood?: FloodResult;
  floor?: FloorResult;
  peer?: PeerResult;
  rateLimits?: RateLimitResult;
  /** The machine's load and each process's CPU while each section measured. */
  sectionLoad?: Partial<Record<SectionKey, SectionLoad>>;
}

/** A section's result in {@link BenchResults}. */
export type SectionKey = Exclude<keyof BenchResults, 'sectionLoad'>;

/**
 * Each section's letter (`--only`), in the order the report shows them, and how it is drawn (from its
 * own result; a section that compares with others of the run reads them from `all`).
 */
const SECTIONS: {
  [K in SectionKey]: {
    id: string;
    render: (result: NonNullable<BenchResults[K]>, all: BenchResults) => string;
  };
} = {
  overhead: { id: 'a', render: overheadSection },
  parallel: { id: 'b', render: parallelSection },
  turnLatency: { id: 'c', render: latencySection },
  historyBytes: { id: 'd', render: historySection },
  throughput: { id: 'e', render: throughputSection },
  idleMemory: { id: 'e', render: idleSection },
  crashRecovery: { id: 'f', render: crashSection },
  actions: { id: 'g', render: actionsSection },
  featureCost: { id: 'k', render: featureCostSection },
  tokenDelay: { id: 'h', render: tokenDelaySection },
  largeContent: { id: 'i', render: largeContentSection },
  largeResults: { id: 'j', render: largeResultsSection },
  flood: { id: 'm', render: floodSection },
  floor: { id: 'l', render: floorSection },
  peer: { id: 'p', render: peerSection },
  rateLimits: { id: 'r', render: rateLimitSection },
};

/** Other processes using this share of the machine's CPU during a section make it a busy one. */
const BUSY_OTHERS_SHARE = 0.25;

/**
 * The 1-minute load averages above the core count, in words. The load average counts this run's own
 * processes too, and lags a minute behind: after a section that filled both cores it is high, though
 * nobody else used the machine.
 */
function highLoad(load: SectionLoad, cores: number): string[] {
  const [before = 0] = load.loadBefore;
  const [after = 0] = load.loadAfter;
  return [
    ...(before > cores ? [`${before.toFixed(2)} before it`] : []),
    ...(after > cores ? [`${after.toFixed(2)} after it`] : []),
  ];
}

/**
 * Why a section ran on a busy machine, in plain words; empty when it did not. Busy means other
 * processes took CPU from it, which /proc measures; a high load average alone is this run's own.
 */
export function busyReasons(load: SectionLoad, cores: number): string[] {
  if (othersShare(load, cores) < BUSY_OTHERS_SHARE) return [];
  const high = highLoad(load, cores);
  return [
    ...(high.length > 0
      ? [`the 1-minute load average was above the ${cores} cores (${high.join(', ')})`]
      : []),
    `other processes used ${percent(othersShare(load, cores))} of the machine's CPU during it`,
  ];
}

const othersShare = (load: SectionLoad, cores: number) => load.cpuMs.others / (load.seconds * 1000 * cores);
const percent = (share: number) => `${(share * 100).toFixed(0)} %`;
const seconds = (cpuMs: number) => `${(cpuMs / 1000).toFixed(2)} s`;

/** The paragraph under each section: the machine's load and each process's CPU while it measured. */
export function sectionLoadNote(load: SectionLoad, cores: number): string {
  const { cpuMs } = load;
  const figures = `Load average (1, 5, 15 min) ${formatLoad(load.loadBefore)} before this section and ${formatLoad(load.loadAfter)} after. CPU used during its ${load.seconds.toFixed(0)} s (user + system, from /proc): dev server ${seconds(cpuMs.server)}, worker processes ${seconds(cpuMs.workers)}, bench process (driver, scripted model server and any in-process worker) ${seconds(cpuMs.driver)}; other processes on the machine ${seconds(cpuMs.others)} (${percent(othersShare(load, cores))} of its ${cores} cores).`;
  const reasons = busyReasons(load, cores);
  if (reasons.length > 0) {
    return `${figures}\n\n**Busy machine:** ${reasons.join('; ')}. Its times are likely longer than on an otherwise idle machine; figures measured side by side within it (ratios) are the ones to compare.`;
  }
  const high = highLoad(load, cores);
  if (high.length === 0) return figures;
  return `${figures} The 1-minute load average was above the ${cores} cores (${high.join(', ')}) from this run's own processes (this section's, or the one before it: the average lags a minute); other processes took no CPU to speak of, so the machine was not busy.`;
}

export interface ReportInput {
  config: BenchConfig;
  machine: MachineInfo;
  durationSeconds: number;
  date: string;
  command: string;
  results: BenchResults;
}

const table = (header: string[], rows: string[][]): string =>
  [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');

const formatLoad = (values: number[]) => values.map((value) => value.toFixed(2)).join(', ');
const ms = (summary: Summary, decimals = 1) => fmt(summary, decimals, ' ms');
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

export function renderReport(input: ReportInput): string {
  const { machine, results, config } = input;
  const sections = [
    `# Benchmarks\n\nGenerated by \`${input.command}\` on ${input.date} in ${input.durationSeconds.toFixed(0)} s.${
      config.quick ? ' **Quick mode: harness check only, too few runs for conclusions.**' : ''
    } Every number comes from this one run; ratios compare numbers measured in it. Values are medians with (min–max) over the runs stated.`,
    machineSection(machine, results),
    goalsSection(results),
    ...(Object.keys(SECTIONS) as SectionKey[]).map((key) => sectionWithLoad(results, key, machine.cores)),
    `## Tuning log\n\nWhat was tried to reach these goals, what each change bought, and what was not taken: [bench/TUNING.md](bench/TUNING.md). What these figures mean for a bill (Temporal Cloud Actions, S3 requests) and the settings that lower it: [docs/costs.md](docs/costs.md).`,
  ];
  return `${sections.filter((section) => section !== '').join('\n\n')}\n`;
}

/** A section's text with its load paragraph, or nothing when the run did not measure it. */
function sectionWithLoad<K extends SectionKey>(results: BenchResults, key: K, cores: number): string {
  const result = results[key];
  if (result === undefined) return '';
  const load = results.sectionLoad?.[key];
  const text = SECTIONS[key].render(result as NonNullable<BenchResults[K]>, results).trim();
  return load ? `${text}\n\n${sectionLoadNote(load, cores)}` : text;
}

function machineSection(machine: MachineInfo, results: BenchResults): string {
  const busy = Object.entries(results.sectionLoad ?? {})
    .filter(([, load]) => busyReasons(load, machine.cores).length > 0)
    .map(
      ([key]) => `(${SECTIONS[key as SectionKey].id})${key === 'idleMemory' ? ' idle conversations' : ''}`,
    );
  const busyLine =
    busy.length > 0
      ? ` Sections that ran on a busy machine, as each says under its figures: ${busy.join(', ')}.`
      : results.sectionLoad
        ? ' No section ran on a busy machine.'
        : '';
  return `## Machine and load\n\n${table(
    ['', ''],
    [
      ['CPU', `${machine.cpuModel}, ${machine.cores} cores`],
      ['Memory', `${machine.memoryGb.toFixed(1)} GB`],
      ['Node', machine.node],
      ['OS', machine.os],
      ['Load average (1, 5, 15 min) before', formatLoad(machine.loadBefore)],
      ['Load average (1, 5, 15 min) after', formatLoad(machine.loadAfter)],
    ],
  )}\n\nThe Temporal dev server (SQLite, WAL), the worker process(es), the scripted model server and the benchmark driver all run on this machine; the machine is shared, so the load average above includes other people's work. Each section says under its figures what the load was and how much CPU each process used while it measured; a section is called busy when other processes used ${percent(BUSY_OTHERS_SHARE)} or more of the machine's CPU during it (a 1-minute load average above the core count with nobody else on the CPU is this run's own work, and is said so without calling the section busy).${busyLine}`;
}

/** One goal's figure from this run; a goal without one says it was not measured. */
interface GoalFigure {
  measured: string;
  /** How far the figure is from the goal, in plain words, when it misses. */
  gap: string;
  /** Undefined when the run cannot tell (it measured a stand-in for the goal's figure). */
  met: boolean | undefined;
  /** Ours over the peer's (section (p)), where the peer section measures the figure. */
  peer?: string;
}

/** `figure` is absent (or `false`, from a guard) when the run has no such figure. */
const goalRow = (goal: string, section: string, figure: GoalFigure | false | undefined): string[] =>
  figure
    ? [
        goal,
        figure.measured,
        figure.met === true ? 'none' : figure.gap,
        figure.peer ?? '',
        figure.met === undefined ? 'not judged' : figure.met ? 'met' : '**missed**',
      ]
    : [goal, `not measured: section (${section}) did not run`, '', '', ''];

/** `0.52 × (0.48–0.60)`: ours over the peer's, run by run. */
const ratioRange = (ratio: Summary) => fmt(ratio, 2, ' ×');
const ratioOf = (ours: number, peer: number) => (peer === 0 ? '–' : `${(ours / peer).toFixed(2)} ×`);
const over = (value: number, goal: number, decimals: number, unit: string) =>
  `${(value - goal).toFixed(decimals)}${unit} over`;
const short = (value: number, goal: number, decimals: number, unit: string) =>
  `${(goal - value).toFixed(decimals)}${unit} short`;

/** Issue 25's goals and the ones before it that still apply, each with this run's figure and its gap. */
function goalsSection(results: BenchResults): string {
  const { peer, floor } = results;
  const rows: string[][] = [];
  /** What the bare workflow of section (l) measured for the same goal. */
  const onFloor = (figure: (floor: FloorResult) => string) =>
    floor ? `; a bare Temporal workflow ${figure(floor)} (l)` : '';

  const perTool = results.overhead?.ours.perToolMs.median ?? peer?.perToolMs.ours.median;
  const perLocalTool = results.overhead?.oursLocalActivity?.perToolMs.median;
  const withLocalTools =
    perLocalTool === undefined ? '' : `; ${perLocalTool.toFixed(1)} ms with \`localActivity\` tools`;
  rows.push(
    goalRow(
      '≤ 5 ms median durability per sequential tool call',
      'a',
      perTool === undefined
        ? undefined
        : {
            measured: `${perTool.toFixed(1)} ms${results.overhead ? withLocalTools : ' (section (p))'}${onFloor(
              (bare) =>
                `${bare.perToolMs.activity.median.toFixed(1)} ms, ${bare.perToolMs.local.median.toFixed(1)} ms with local activities`,
            )}`,
            gap: over(perTool, 5, 1, ' ms'),
            met: perTool <= 5,
            ...(peer ? { peer: ratioRange(peer.ratios.perToolMs) } : {}),
          },
    ),
  );
  rows.push(
    goalRow(
      "Durability per sequential tool call at most half the peer's",
      'p',
      peer && {
        measured: `${peer.perToolMs.ours.median.toFixed(1)} ms against ${peer.perToolMs.peer.median.toFixed(1)} ms${
          peer.oursLocalActivity
            ? `; with \`localActivity\` tools ${peer.oursLocalActivity.perToolMs.median.toFixed(1)} ms (${ratioRange(peer.oursLocalActivity.ratios.perToolMs)})`
            : ''
        }`,
        gap: over(peer.ratios.perToolMs.median, 0.5, 2, ' ×'),
        met: peer.ratios.perToolMs.median <= 0.5,
        peer: ratioRange(peer.ratios.perToolMs),
      },
    ),
  );

  const parallel = results.parallel?.ours.parallel;
  const efficiency = parallel ? parallelEfficiency(parallel.batchMs.median) : undefined;
  const localBatch = results.parallel?.ours.parallelLocalActivity?.batchMs.median;
  const localEfficiency =
    localBatch === undefined
      ? ''
      : `; ${parallelEfficiency(localBatch).toFixed(2)} with \`localActivity\` tools (batch ${localBatch.toFixed(0)} ms)`;
  rows.push(
    goalRow(
      `Parallel efficiency ≥ 0.95 (${PARALLEL_TOOLS} × 200 ms)`,
      'b',
      parallel &&
        efficiency !== undefined && {
          measured: `${efficiency.toFixed(2)} (batch ${parallel.batchMs.median.toFixed(0)} ms; the executions alone ${(parallel.executionsMs?.median ?? Number.NaN).toFixed(0)} ms)${localEfficiency}${onFloor(
            (bare) =>
              `${parallelEfficiency(bare.parallelBatchMs.activity.median).toFixed(2)}, ${parallelEfficiency(bare.parallelBatchMs.local.median).toFixed(2)} with local activities`,
          )}`,
          gap: short(efficiency, 0.95, 2, ''),
          met: efficiency >= 0.95,
          ...(peer ? { peer: ratioRange(peer.ratios.parallelEfficiency) } : {}),
        },
    ),
  );

  rows.push(...batchedGoalRows(results));

  const latency = results.turnLatency;
  const latencyGrowth = latency
    ? (latency.windows.at(-1)?.ms.median ?? Number.NaN) / (latency.windows[1]?.ms.median ?? Number.NaN)
    : undefined;
  rows.push(
    goalRow(
      `Turn ${latency?.turns ?? 500} ≤ 1.2 × turn 1`,
      'c',
      latency &&
        latencyGrowth !== undefined && {
          measured: `${latencyGrowth.toFixed(2)} × (${latency.windows.at(-1)?.window.label} vs ${latency.windows[1]?.window.label})`,
          gap: over(latencyGrowth, 1.2, 2, ' ×'),
          met: latencyGrowth <= 1.2,
        },
    ),
  );

  const history = results.historyBytes;
  const historyFirst = history?.[0];
  const historyLast = history?.at(-1);
  const peerLate = peer?.history.at(-1);
  rows.push(
    goalRow(
      'History added per turn independent of context size',
      'd',
      historyFirst &&
        historyLast &&
        history.length > 1 && {
          measured: `${kb(historyFirst.oursAdded)} at turn ${historyFirst.turn}, ${kb(historyLast.oursAdded)} at turn ${historyLast.turn} (${(historyLast.oursAdded / historyFirst.oursAdded).toFixed(2)} ×)`,
          gap: over(historyLast.oursAdded / historyFirst.oursAdded, 1.1, 2, ' ×'),
          met: historyLast.oursAdded / historyFirst.oursAdded <= 1.1,
          ...(peerLate
            ? {
                peer: `${ratioOf(peerLate.bytes.ours, peerLate.bytes.peer)} at turn ${peerLate.turn} (one run)`,
              }
            : {}),
        },
    ),
  );

  rows.push(goalRow(HISTORY_GOAL, 'd', historyLast && historyGoalFigure(historyLast)));
  rows.push(...historyAgainstLocalRows(peer));

  const levels = results.throughput?.levels;
  const cpuPerTurn = levels?.map((level) => ({
    conversations: level.conversations,
    ms: level.cpuMsPerTurn.server.median + level.cpuMsPerTurn.worker.median,
  }));
  const mostCpu = cpuPerTurn && Math.max(...cpuPerTurn.map((level) => level.ms));
  const configurations = results.throughput ? cheaperConfigurations(results.throughput) : [];
  const quietCpu = configurations
    .map(
      ({ level, shortLabel }) =>
        `; ${cpuSum(level.cpuMsPerTurn).toFixed(1)} ms at ${level.conversations} with ${shortLabel}`,
    )
    .join('');
  rows.push(
    goalRow(
      'CPU per text turn ≤ 30 ms of server + worker (at every concurrency measured)',
      'e',
      cpuPerTurn &&
        mostCpu !== undefined && {
          measured: `${cpuPerTurn
            .map(
              (level) =>
                `${level.ms.toFixed(1)} ms at ${level.conversations} conversation${level.conversations === 1 ? '' : 's'}`,
            )
            .join(', ')}${quietCpu}${onFloor(
            (bare) =>
              `${cpuSum(bare.textTurn.cpuMs).toFixed(1)} ms at 1, ${cpuSum(bare.throughput.cpuMsPerTurn).toFixed(1)} ms at ${bare.throughput.conversations}`,
          )}`,
          gap: over(mostCpu, 30, 1, ' ms'),
          met: mostCpu <= 30,
          ...(peer ? { peer: `${ratioRange(peer.cpuMsPerTextTurn.ratio)} at 1 conversation` } : {}),
        },
    ),
  );
  const hundred = levels?.find((level) => level.conversations === 100);
  rows.push(
    goalRow(
      '≥ 100 turns/s with 100 concurrent conversations',
      'e',
      hundred && {
        measured: `${hundred.turnsPerSecond.median.toFixed(1)} turns/s${configurations
          .filter(({ level }) => level.conversations === 100)
          .map(({ level, shortLabel }) => `; ${level.turnsPerSecond.median.toFixed(1)} with ${shortLabel}`)
          .join('')}${onFloor((bare) => `${bare.throughput.turnsPerSecond.median.toFixed(1)} turns/s`)}`,
        gap: short(hundred.turnsPerSecond.median, 100, 1, ' turns/s'),
        met: hundred.turnsPerSecond.median >= 100,
      },
    ),
  );

  const idle = results.idleMemory;
  const idleMb = idle && (idle.conversations >= 10_000 ? idle.afterRssMb : idle.extrapolatedTenThousandMb);
  rows.push(
    goalRow(
      '10,000 idle open conversations within 2 GB of worker memory',
      'e',
      idle &&
        idleMb !== undefined && {
          measured:
            idle.conversations >= 10_000
              ? `${idleMb.toFixed(0)} MB (measured)`
              : `${idleMb.toFixed(0)} MB (extrapolated from ${idle.conversations.toLocaleString('en')})`,
          gap: over(idleMb, 2048, 0, ' MB'),
          met: idleMb <= 2048,
          ...(peer
            ? {
                peer: peerIdleFigure(peer.idleMemory),
              }
            : {}),
        },
    ),
  );

  const actionGoals = results.actions?.rows.filter((row) => row.goal !== undefined);
  if (actionGoals) {
    const peerActions = peer?.actions;
    const peerRatio: Record<string, string> = peerActions
      ? {
          [TEXT_TURN]: `${ratioOf(peerActions.textTurn.ours, peerActions.textTurn.peer)} (one run)`,
          [TOOL_TURN]: `${ratioOf(peerActions.toolTurn.ours, peerActions.toolTurn.peer)} (one run)`,
        }
      : {};
    for (const row of actionGoals) {
      const goal = row.goal as number;
      const ratio = peerRatio[row.label];
      const actionsOf = (label: string) =>
        results.actions?.rows.find((other) => other.label === label)?.actions;
      const quiet = actionsOf(`${row.label}${WITHOUT_LIVE_SEARCH_ATTRIBUTES}`);
      const local = row.label === TOOL_TURN ? actionsOf(LOCAL_TOOL_TURN) : undefined;
      const localQuiet = actionsOf(`${LOCAL_TOOL_TURN}${WITHOUT_LIVE_SEARCH_ATTRIBUTES}`);
      const withLocalTools =
        local === undefined || localQuiet === undefined
          ? ''
          : `; with \`localActivity\` tools ${fmtActions(local)} and ${fmtActions(localQuiet)}`;
      const localModel = actionsOf(`${row.label}${LOCAL_MODEL_CALLS}`);
      const withLocalModel =
        localModel === undefined ? '' : `; with \`modelPolicy.localActivity\` ${fmtActions(localModel)}`;
      rows.push(
        goalRow(`Actions: ${row.label} ≤ ${goal}`, 'g', {
          measured:
            quiet === undefined
              ? fmtActions(row.actions)
              : `${fmtActions(row.actions)} (${fmtActions(quiet)} with \`liveSearchAttributes: false\`${withLocalTools}${withLocalModel})`,
          gap: over(row.actions, goal, 0, ' Actions'),
          met: row.actions <= goal,
          ...(ratio ? { peer: ratio } : {}),
        }),
      );
    }
  } else {
    rows.push(
      goalRow(
        'Actions: unfollowed text turn 2, tool turn with two tools 5, followed tool turn ≤ 7, 60 s tool with progress ≤ 8, idle 0',
        'g',
        undefined,
      ),
    );
  }
  const peerActions = peer?.actions;
  const quietActions = [TEXT_TURN, TOOL_TURN].map((label) =>
    results.actions?.rows.find((row) => row.label === `${label}${WITHOUT_LIVE_SEARCH_ATTRIBUTES}`),
  );
  const withoutLiveAttributes = quietActions.every((row) => row)
    ? `; with \`liveSearchAttributes: false\` ${quietActions.map((row) => fmtActions(row?.actions ?? 0)).join(' and ')} (section (g))`
    : '';
  const actionsOverPeer = peerActions && {
    text: peerActions.textTurn.ours - peerActions.textTurn.peer,
    tool: peerActions.toolTurn.ours - peerActions.toolTurn.peer,
  };
  rows.push(
    goalRow(
      "Actions never more than the peer's (text turn, turn with two tool calls)",
      'p',
      peerActions &&
        actionsOverPeer && {
          measured: `text turn ${peerActions.textTurn.ours} against ${peerActions.textTurn.peer}; tool turn ${peerActions.toolTurn.ours} against ${peerActions.toolTurn.peer}${withoutLiveAttributes}`,
          gap: `${Math.max(0, actionsOverPeer.text)} over on the text turn, ${Math.max(0, actionsOverPeer.tool)} on the tool turn`,
          met: actionsOverPeer.text <= 0 && actionsOverPeer.tool <= 0,
        },
    ),
  );
  rows.push(
    goalRow(
      "A plain text turn no slower than the peer's local-activity configuration",
      'p',
      peer && plainTurnAgainstLocalPeer(peer),
    ),
  );

  const tokens = results.tokenDelay;
  rows.push(
    goalRow(
      `Token to follower ≤ ${TOKEN_DELAY_GOAL.p99Ms} ms p99`,
      'h',
      tokens &&
        tokens.rows.length > 0 && {
          measured: tokens.rows
            .map(
              (row) =>
                `${row.p99Ms.toFixed(0)} ms p99 (median ${row.medianMs.toFixed(0)} ms) ${TOKEN_DELAY_STORES[row.store]}${row.pollUpdates > 0 ? `, polling (${row.pollUpdates} poll Updates)` : ''}`,
            )
            .join('; '),
          gap: over(Math.max(...tokens.rows.map((row) => row.p99Ms)), TOKEN_DELAY_GOAL.p99Ms, 0, ' ms'),
          met: tokens.rows.every((row) => row.p99Ms <= TOKEN_DELAY_GOAL.p99Ms),
        },
    ),
  );

  const followed = results.actions?.rows.find((row) => row.label === FOLLOWED_TOOL_TURN);
  const followedOnS3 = results.actions?.rows.find(
    (row) => row.label === `${FOLLOWED_TOOL_TURN}${ON_S3_STORE}`,
  );
  const unfollowed = results.actions?.rows.find((row) => row.label === TOOL_TURN);
  const followedRows = followed?.uiRows && uiRowCount(followed.uiRows);
  const followedRowsOnS3 = followedOnS3?.uiRows && uiRowCount(followedOnS3.uiRows);
  rows.push(
    goalRow(
      `A followed turn ≤ ${FOLLOWED_UI_ROWS_GOAL} Web UI rows besides the user's message, model calls, tool calls, approvals and sub-agents`,
      'g',
      followed?.uiRows &&
        followedRows !== undefined && {
          measured: `${followedRows} (${uiRowKinds(followed.uiRows)})${followedRowsOnS3 === undefined ? '' : `; ${followedRowsOnS3} with the worker and follower on the S3 store`}${unfollowed?.uiRows ? `; the same turn unfollowed: ${uiRowCount(unfollowed.uiRows)}` : ''}`,
          gap: over(Math.max(followedRows, followedRowsOnS3 ?? 0), FOLLOWED_UI_ROWS_GOAL, 0, ' rows'),
          met: Math.max(followedRows, followedRowsOnS3 ?? 0) <= FOLLOWED_UI_ROWS_GOAL,
        },
    ),
  );

  const large = results.largeResults;
  const longest = large && Math.max(...large.map((point) => point.bystanderLongestMs));
  const answered = large?.every((point) => !point.outcome.startsWith('error'));
  rows.push(
    goalRow(
      `A bystander's turn < 1 s while a tool returns ${LARGE_RESULT_KB / 1024} MB (plain, written, MCP)`,
      'j',
      longest !== undefined && {
        measured: `longest ${longest.toFixed(0)} ms${answered ? '' : '; a big call ended in an error'}`,
        gap: answered ? over(longest, 1000, 0, ' ms') : 'a big call ended in an error',
        met: longest < 1000 && answered === true,
      },
    ),
  );

  const content = results.largeContent?.points;
  const contentFirst = content?.[0];
  const contentLast = content?.at(-1);
  const contentMet =
    contentFirst &&
    contentLast &&
    contentLast.maxTurnAddedBytes <= contentFirst.maxTurnAddedBytes * 1.2 + 1024 &&
    contentLast.workerHeapMb <= contentFirst.workerHeapMb + 64;
  rows.push(
    goalRow(
      'History per turn and worker memory independent of content size',
      'i',
      contentFirst &&
        contentLast &&
        content.length > 1 && {
          measured: `at most ${kb(contentFirst.maxTurnAddedBytes)} a turn and ${contentFirst.workerHeapMb.toFixed(0)} MB heap at ${contentFirst.contentMb.toFixed(0)} MB of content; ${kb(contentLast.maxTurnAddedBytes)} and ${contentLast.workerHeapMb.toFixed(0)} MB at ${contentLast.contentMb.toFixed(0)} MB`,
          gap: 'grows with content',
          met: contentMet === true,
        },
    ),
  );
  return `## Goals\n\nThe goals of issue 25 and the earlier ones that still apply. Gap: how far the figure is from its goal. yiem / peer: our figure over \`@temporalio/openai-agents\`' (section (p)), median (min–max) of the run-by-run ratios where the two sides alternated; below 1 is fewer milliseconds, bytes or Actions for ours, above 1 a better efficiency.\n\n${table(
    ['Goal', 'Measured', 'Gap', 'yiem / peer', ''],
    rows,
  )}`;
}

/** Issue 25: a followed conversation reads like an unfollowed one in the Web UI. */
const FOLLOWED_UI_ROWS_GOAL = 2;
const uiRowCount = (rows: Record<string, number>) =>
  Object.values(rows).reduce((sum, count) => sum + count, 0);
/** `Update __temporal_workflow_stream_poll 8, UpsertWorkflowSearchAttributes 2`, biggest first. */
const uiRowKinds = (rows: Record<string, number>) =>
  Object.entries(rows)
    .sort(([, a], [, b]) => b - a)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ') || 'none';

const fmtActions = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));

/** `ScheduleActivityTask 3, UpdateWorkflowExecution:Acceptance 1`, biggest first. */
function actionTypes(row: Pick<ActionRow, 'byType'>): string {
  return Object.entries(row.byType)
    .sort(([, a], [, b]) => b - a)
    .map(([type, count]) => `${type.replace(/^(grpc|command|message)_/, '')} ${fmtActions(count)}`)
    .join(', ');
}

function actionsSection(result: ActionsResult): string {
  return `## (g) Temporal Cloud Actions per turn\n\nCounted by the dev server itself: its \`action\` metric, which the frontend records for every billable call and command (the counting Temporal documents for estimating Cloud usage from a self-hosted server), read before and after each step, one step at a time with nothing else running, ${'1 s'} after the step before it and after the step itself for trailing workflow tasks and the server's count of the last call. One conversation, and for the rows that say so a second one started with \`liveSearchAttributes: false\` (no \`YiemStatus\`, \`YiemTurns\` or \`YiemCost\` upserts); the model streams its replies over about 1.6 s (as a real one does) and takes 0.8 s to decide on tool calls. The follower is what \`yiem chat\` runs: \`statusAndOffset()\` (one query) when it opens, then \`events()\`, which here reads on the payload store's live channel (the worker shares the client's file store): one \`events\` query when it attaches, then files, no poll Update or signal. The rows that say so measured the same with a worker and a follower of their own on an S3 store (a real S3-compatible server on this machine, \`deploy/s3\`), the live channel a prefix of its bucket. The long tool heartbeats with the default 30 s heartbeat timeout. The idle chat was measured for ${result.idleSeconds} s and scaled to an hour. Minimum = what the design cannot do without: one activity per model call and tool call (the \`localActivity\` tools' calls of one workflow task: one Action, as Temporal Cloud bills local activities) (plus, once per conversation, asking the worker for its default model), the prompt Update, and for a long tool one heartbeat per heartbeat timeout. The first turn of each run also pays, once, each \`patched()\` change the run uses: its marker (\`BatchMarkers\`) and Temporal's \`TemporalChangeVersion\` search-attribute upsert. Meter = what the turn's own result said it used (\`spend.actions\`, the conversation's Action meter, [docs/costs.md](docs/costs.md#the-action-meter)), ✓ where it equals the server's count; the meter leaves out Queries, heartbeats and those patch markers, so a step with them shows the difference.\n\n${table(
    ['Step', 'Actions', 'Meter', 'Minimum', 'Gap', 'By type'],
    result.rows.map((row) => [
      row.label,
      fmtActions(row.actions),
      meterCell(row),
      String(row.minimum),
      fmtActions(row.actions - row.minimum),
      actionTypes(row),
    ]),
  )}`;
}

/**
 * What the conversation's Action meter said of a turn step, beside the server's count: the two agree,
 * or the cell says by how much they do not (the meter leaves out Queries, heartbeats and patch markers).
 */
function meterCell(row: ActionRow): string {
  if (row.metered === undefined) return '';
  const off = row.actions - row.metered;
  return off === 0 ? `${row.metered} ✓` : `${row.metered} (server ${off > 0 ? '+' : ''}${fmtActions(off)})`;
}

function featureCostSection(result: FeatureCostResult): string {
  const byLabel = new Map(result.rows.map((row) => [row.label, row]));
  const added = (row: FeatureCostRow, figure: (row: FeatureCostRow) => number, unit = '') => {
    const base = row.against ? byLabel.get(row.against) : undefined;
    if (!base) return '';
    const delta = figure(row) - figure(base);
    return `${delta >= 0 ? '+' : ''}${fmtActions(delta)}${unit}`;
  };
  return `## (k) What each control of a running agent adds to a turn\n\nBudgets, at-most-once tools, a stop at a budget with its resume, compaction, and a message sent 0.5 s into a 1.5 s tool as a steer, a follow-up or an interrupt (issue 22), each measured as one step alone against the plain turn it extends: Temporal Cloud Actions (the server's \`action\` metric, read before and after, ${'1 s'} after the step for trailing workflow tasks) and the history events and bytes (encoded, as the server stores them) the step added. Every text turn sends a ${'400-byte'} message; the compacting conversation has a 3 000-byte window and keeps 2 recent turns. Each conversation's first text and tool turns are left out (they ask the worker for its default model and write the patch markers). One run: the counts are deterministic but for timing: two parallel results that land apart take one workflow task more (3 events, about 900 bytes), and a trailing task may fall outside the 1 s.\n\n${table(
    [
      'Step',
      'Actions',
      'Events',
      'Bytes',
      'Compared with',
      'Actions added',
      'Events added',
      'Bytes added',
      'By type',
    ],
    result.rows.map((row) => [
      row.label,
      fmtActions(row.actions),
      String(row.events),
      String(row.bytes),
      row.against ?? '',
      added(row, (r) => r.actions),
      added(row, (r) => r.events),
      added(row, (r) => r.bytes),
      actionTypes(row),
    ]),
  )}`;
}

/** Where (h)'s follower and worker kept payloads, and so read the live channel. */
const TOKEN_DELAY_STORES: Record<TokenDelayStore, string> = {
  file: 'on the file store',
  s3: 'on the S3 store',
};

function tokenDelaySection(result: TokenDelayResult): string {
  return `## (h) Token delay for a follower\n\nThe scripted model streams one token every 50 ms (2 s per reply); for every token, the time from the model server writing it to \`Conversation.events()\` yielding the event that carries it, on one machine. ${result.turns} turns after one that is not measured (the follower is surely attached by its end), as \`yiem chat\` reads along: the worker and the follower on one payload store, the file store (a folder), then an S3 store (a real S3-compatible server on this machine, \`deploy/s3\`), where the follower reads the live channel, which the column of poll Updates in the conversation's history confirms (0: no poll).\n\n${table(
    ['store', 'tokens', 'Median', 'p99', 'Max', 'poll Updates', 'Goal'],
    result.rows.map((row) => [
      TOKEN_DELAY_STORES[row.store].replace(/^on the /, ''),
      String(row.tokens),
      `${row.medianMs.toFixed(0)} ms`,
      `${row.p99Ms.toFixed(0)} ms`,
      `${row.maxMs.toFixed(0)} ms`,
      String(row.pollUpdates),
      `≤ ${TOKEN_DELAY_GOAL.p99Ms} ms p99`,
    ]),
  )}`;
}

/** A per-call cost within noise of zero (an in-process loop's, a batch's): a ratio to it means nothing. */
const MEANINGFUL_BASELINE_MS = 0.5;

function overheadSection(result: OverheadResult): string {
  const piPerTool = result.pi.perToolMs.median;
  const ratio =
    piPerTool >= MEANINGFUL_BASELINE_MS
      ? `**${(result.ours.perToolMs.median / piPerTool).toFixed(1)} ×**`
      : `not meaningful (baseline below ${MEANINGFUL_BASELINE_MS} ms)`;
  return `## (a) Overhead per tool call\n\nOne turn in which the model asks for ${OVERHEAD_TOOL_CALLS} calls of a tool that returns at once, in sequential mode, against a turn with one call in the same conversation; per tool call = (tool turn − one-call turn) / ${OVERHEAD_TOOL_CALLS - 1}. Both turns make two model calls, so the difference holds tool calls only; CPU per tool call is the Temporal server's and the worker process's CPU (from /proc, 10 ms ticks) by the same rule. ${result.runs} runs after 2 warm-up runs, ours and the baseline alternating, each run in a fresh conversation (and a fresh baseline agent). The baseline is \`@mariozechner/pi-agent-core\`'s \`Agent\` (in-process loop) with pi-ai's OpenAI-compatible provider pointed at the same scripted model server (it streams; ours does not), and the same tools.\n\n${table(
    [
      '',
      'per tool call',
      'CPU per tool call (server + worker)',
      `turn with ${OVERHEAD_TOOL_CALLS} tools`,
      'turn with one tool',
      'turn without tools',
      `Actions of the turn with ${OVERHEAD_TOOL_CALLS} tools`,
    ],
    [
      overheadRow('yiem-agent (durable)', result.ours),
      ...(result.oursLocalActivity
        ? [overheadRow('yiem-agent, the tool a `localActivity`', result.oursLocalActivity)]
        : []),
      ...(result.oursBatched ? [overheadRow('yiem-agent, the tool `batched`', result.oursBatched)] : []),
      overheadRow('pi-agent-core (in-process)', result.pi),
    ],
  )}\n\nRatio of medians, per tool call: ${ratio}; absolute difference ${(result.ours.perToolMs.median - result.pi.perToolMs.median).toFixed(1)} ms per tool call.${result.oursLocalActivity ? " The `localActivity` row is the same tool declared `localActivity: true`, its turns sent in the same conversations and runs: each call a local activity inside the workflow task, its result recorded with the task's completion (a marker), no activity task and no workflow task of its own." : ''}${result.oursBatched ? " The `batched` row is the same tool declared `batched: true`, in the same conversations and runs: a turn's calls in one `executeTools` activity, checkpointed by heartbeat after each. Actions are the turn's meter (its result's `spend.actions`), which leaves out heartbeats (a batch of fast calls sends one, its first checkpoint)." : ''}`;
}

/** A turn's search-attribute upserts with `liveSearchAttributes` on: running (with the turn count) and idle. */
const STATUS_UPSERTS_PER_TURN = 2;

/** Issue 49's goals for batched calls: per call and against the peer (a, p), parallel efficiency (b), Actions (a). */
function batchedGoalRows(results: BenchResults): string[][] {
  const batched = results.overhead?.oursBatched;
  const peerPerTool = results.peer?.perToolMs.peer.median;
  const perCall = batched?.perToolMs.median;
  const againstPeer = perCall !== undefined && peerPerTool ? perCall / peerPerTool : undefined;
  const parallel = results.parallel?.ours.parallelBatched;
  const efficiency = parallel ? parallelEfficiency(parallel.batchMs.median) : undefined;
  const floorBatch = results.floor?.parallelBatchMs.batched.median;
  const onFloor = floorBatch
    ? `; a bare Temporal workflow running the ${PARALLEL_TOOLS} in one activity ${parallelEfficiency(floorBatch).toFixed(2)} (l)`
    : '';
  const actions = batched?.toolTurnActions?.median;
  return [
    goalRow(
      'Batched sequential fast tool call ≤ 1 ms per call and ≤ 0.1 × the peer',
      'a',
      perCall !== undefined && {
        measured: `${perCall.toFixed(2)} ms${againstPeer === undefined ? '' : `; the peer ${peerPerTool?.toFixed(1)} ms (p): ${againstPeer.toFixed(2)} ×`}`,
        gap:
          perCall > 1
            ? over(perCall, 1, 2, ' ms')
            : againstPeer !== undefined && againstPeer > 0.1
              ? over(againstPeer, 0.1, 2, ' ×')
              : 'none',
        met: perCall <= 1 && (againstPeer === undefined || againstPeer <= 0.1),
      },
    ),
    goalRow(
      `Batched parallel efficiency ≥ 0.92 (${PARALLEL_TOOLS} × 200 ms)`,
      'b',
      parallel &&
        efficiency !== undefined && {
          measured: `${efficiency.toFixed(2)} (batch ${parallel.batchMs.median.toFixed(0)} ms)${onFloor}`,
          gap: short(efficiency, 0.92, 2, ''),
          met: efficiency >= 0.92,
        },
    ),
    defaultAgainstFloorRow(results),
    goalRow(
      `A reply with ${OVERHEAD_TOOL_CALLS} fast batched tool calls ≤ 4 Actions besides the status upserts`,
      'a',
      actions !== undefined && {
        measured: `${actions - STATUS_UPSERTS_PER_TURN} (the turn's meter: ${actions}, with its ${STATUS_UPSERTS_PER_TURN} status upserts)`,
        gap: over(actions - STATUS_UPSERTS_PER_TURN, 4, 0, ' Actions'),
        met: actions - STATUS_UPSERTS_PER_TURN <= 4,
      },
    ),
  ];
}

/** Issue 49: a default tool call (one activity) within 1.1 × the bare workflow's, in latency and in CPU (a, l). */
function defaultAgainstFloorRow(results: BenchResults): string[] {
  const ours = results.overhead?.ours;
  const floor = results.floor;
  const figure = (label: string, mine: Summary | undefined, bare: Summary) => {
    if (!mine) return undefined;
    const ratio = mine.median / bare.median;
    const text = `${label} ${mine.median.toFixed(1)} ms against ${bare.median.toFixed(1)} ms (${ratio.toFixed(2)} ×)`;
    return { text, ratio };
  };
  const figures = floor
    ? [
        figure('per call', ours?.perToolMs, floor.perToolMs.activity),
        figure('CPU per call', ours?.cpuPerToolMs, floor.cpuPerToolMs.activity),
      ].filter((each) => each !== undefined)
    : [];
  const worst = Math.max(...figures.map((each) => each.ratio));
  return goalRow(
    'Default tool call (one activity) ≤ 1.1 × the bare workflow, in latency and in CPU (server + worker) per call',
    ours ? 'l' : 'a',
    figures.length > 0 && {
      measured: `${figures.map((each) => each.text).join('; ')} (l)`,
      gap: over(worst, 1.1, 2, ' ×'),
      met: worst <= 1.1,
    },
  );
}

/** A row of section (a): per call, its CPU, the three turns, and the Actions of the turn with the calls when counted. */
function overheadRow(name: string, figures: OverheadResult['ours']): string[] {
  return [
    name,
    ms(figures.perToolMs, 2),
    figures.cpuPerToolMs ? ms(figures.cpuPerToolMs) : 'n/a',
    ms(figures.toolTurnMs),
    figures.oneCallTurnMs ? ms(figures.oneCallTurnMs) : 'n/a',
    ms(figures.plainTurnMs),
    figures.toolTurnActions ? String(figures.toolTurnActions.median) : 'n/a',
  ];
}

function parallelSection(result: ParallelResult): string {
  const row = (name: string, mode: ParallelResult['ours']['parallel']) => [
    name,
    mode.toExecutionMs ? ms(mode.toExecutionMs, 0) : 'n/a',
    mode.executionsMs ? ms(mode.executionsMs, 0) : 'n/a',
    ms(mode.batchMs, 0),
    ms(mode.turnMs, 0),
    parallelEfficiency(mode.batchMs.median).toFixed(2),
  ];
  return `## (b) Parallel vs sequential\n\n${PARALLEL_TOOLS} tools that each sleep 200 ms, in one model reply; ${result.runs} runs after 1 warm-up. Batch = from the model call that asked for the tools completing to the next model call being scheduled (ours: history event times, so all executions and the workflow tasks before and after them; PREPARE runs inside the model call; pi: from the assistant message's end to \`turn_end\`). Executions = from the first execution being scheduled to the last one completing, the tools' own span. Efficiency = 200 ms / batch.${result.ours.parallelLocalActivity ? ' The `localActivity` row runs the same tool declared `localActivity: true`: its executions are local activities that leave no events of their own (n/a), so only its batch is timed.' : ''}${result.ours.parallelBatched ? ' The `batched` row runs the same tool declared `batched: true`: the eight calls run concurrently inside one `executeTools` activity.' : ''}\n\n${table(
    ['', 'model reply → first tool scheduled', 'executions', 'tool batch', 'whole turn', 'efficiency'],
    [
      row('yiem-agent, parallel', result.ours.parallel),
      row('yiem-agent, sequential', result.ours.sequential),
      ...(result.ours.parallelLocalActivity
        ? [row('yiem-agent, parallel, `localActivity` tools', result.ours.parallelLocalActivity)]
        : []),
      ...(result.ours.parallelBatched
        ? [row('yiem-agent, parallel, `batched` tools', result.ours.parallelBatched)]
        : []),
      row('pi-agent-core, parallel', result.pi.parallel),
      row('pi-agent-core, sequential', result.pi.sequential),
    ],
  )}\n\nSequential over parallel batch time (ours): ${(result.ours.sequential.batchMs.median / result.ours.parallel.batchMs.median).toFixed(2)} × (ideal ${PARALLEL_TOOLS} ×).`;
}

function latencySection(result: TurnLatencyResult): string {
  const base = result.windows[1]?.ms.median ?? Number.NaN;
  return `## (c) Turn latency vs conversation length\n\nOne conversation, ${result.turns} text turns back to back (one model call each), latency of the prompt Update as the client sees it; ${result.runs} runs, each a fresh conversation. A window's value per run is the median of its turns; the table shows median (min–max) over runs. Turn 1 is a single cold turn (the workflow's first task and the worker's first model-context query), so turns 2–11 are the reference for the goal.\n\n${table(
    ['turns', 'latency', 'vs turns 2–11'],
    result.windows.map(({ window, ms: summary }) => [
      window.label,
      ms(summary),
      `${(summary.median / base).toFixed(2)} ×`,
    ]),
  )}`;
}

const HISTORY_GOAL = `History per turn at turn 100 with ${MESSAGE_BYTES.toLocaleString('en')}-byte messages ≤ ${kb(HISTORY_GOAL_BYTES.textTurn)} (text turn) and ≤ ${kb(HISTORY_GOAL_BYTES.toolTurn)} (tool turn)`;

/** Issue 49's history goal, judged at the last point of section (d) and the tool turn after it. */
function historyGoalFigure(point: HistoryBytesPoint): GoalFigure | undefined {
  const tool = point.oursToolTurnAdded;
  if (tool === undefined) return undefined;
  const over = [point.oursAdded - HISTORY_GOAL_BYTES.textTurn, tool - HISTORY_GOAL_BYTES.toolTurn];
  return {
    measured: `text turn ${kb(point.oursAdded)} at turn ${point.turn}, tool turn ${kb(tool)} after it`,
    gap: `text ${kb(Math.max(0, over[0] ?? 0))} over, tool ${kb(Math.max(0, over[1] ?? 0))} over`,
    met: over.every((bytes) => bytes <= 0),
  };
}

/** Issue 49's history goals against the peer's local-activity configuration (section (p), 2,000-byte messages). */
function historyAgainstLocalRows(peer: PeerResult | undefined): string[][] {
  const late = peer?.historyAgainstLocal?.at(-1);
  const localLate = peer?.historyLocalAgainstLocal?.at(-1);
  const alike = localLate
    ? `; with \`modelPolicy.localActivity\` ${kb(localLate.bytes.ours)} against ${kb(localLate.bytes.peer)} (${ratioOf(localLate.bytes.ours, localLate.bytes.peer)})`
    : '';
  const figure = (limit: number) =>
    late && {
      measured: `${kb(late.bytes.ours)} against ${kb(late.bytes.peer)} at text turn ${late.turn}${alike}`,
      gap: over(late.bytes.ours / late.bytes.peer, limit, 2, ' ×'),
      met: late.bytes.ours <= limit * late.bytes.peer,
      peer: ratioOf(late.bytes.ours, late.bytes.peer),
    };
  return [
    goalRow("History per turn never more than the peer's local-activity configuration", 'p', figure(1)),
    goalRow("History per turn ≤ 0.5 × the peer's local-activity configuration", 'p', figure(0.5)),
  ];
}

function historySection(points: HistoryBytesPoint[]): string {
  return `## (d) History bytes per turn vs context size\n\nEach user message is ${MESSAGE_BYTES.toLocaleString('en')} bytes and the model answers "done"; bytes are the encoded size of the workflow history (as \`GetWorkflowExecutionHistory\` returns it) after the turn minus before it. The baseline (\`bench/baseline/\`, not part of the product) is a workflow that passes the whole context in every model-call activity input, as other Temporal integrations do. Byte counts are deterministic; one run.\n\n${table(
    [
      'turn',
      'context before the turn',
      'added by the turn: ours',
      'added: baseline',
      'history total: ours',
      'total: baseline',
    ],
    points.map((point) => [
      String(point.turn),
      kb(point.contextBytes),
      kb(point.oursAdded),
      kb(point.baselineAdded),
      kb(point.oursTotal),
      kb(point.baselineTotal),
    ]),
  )}${toolTurnNote(points.at(-1))}`;
}

function toolTurnNote(point: HistoryBytesPoint | undefined): string {
  if (point?.oursToolTurnAdded === undefined) return '';
  return `\n\nA tool turn right after turn ${point.turn} (a ${MESSAGE_BYTES.toLocaleString('en')}-byte message asking for two calls of a tool that answers at once, then "done") added ${kb(point.oursToolTurnAdded)} to ours. Each user message and each tool result is in history once (\`test/integration/historyGrowth.test.ts\`); \`npx tsx bench/historyBreakdown.ts\` shows where a turn's bytes go, by event and payload field.`;
}

/**
 * The highest throughput level run again in the configurations that cost less, as the (e) table
 * labels them and as the Goals table names them in short.
 */
function cheaperConfigurations(
  result: ThroughputResult,
): { level: ThroughputLevel; label: string; shortLabel: string }[] {
  const quiet = '`liveSearchAttributes: false`';
  const local = '`modelPolicy.localActivity`';
  return [
    ...(result.withoutLiveSearchAttributes
      ? [{ level: result.withoutLiveSearchAttributes, label: quiet, shortLabel: quiet }]
      : []),
    ...(result.localModelCalls
      ? [
          { level: result.localModelCalls.live, label: local, shortLabel: local },
          { level: result.localModelCalls.quiet, label: `${local} and ${quiet}`, shortLabel: 'both' },
        ]
      : []),
  ];
}

function throughputSection(result: ThroughputResult): string {
  return `## (e) Throughput and worker memory\n\nN conversations each sending text turns (one model call per turn) back to back for ${result.seconds} s, after one warm-up turn each; ${result.runs} runs per level, one worker process (default options), server and worker on this machine. Worker RSS is read at the end of each run after a forced GC; the idle worker had ${result.idleWorkerRssMb.toFixed(0)} MB.\n\n${table(
    [
      'concurrent conversations',
      'turns per second',
      'median turn latency',
      'worker RSS',
      'CPU per turn: server',
      'worker',
      'driver',
    ],
    [
      ...result.levels.map((level) => ({ level, label: String(level.conversations) })),
      ...cheaperConfigurations(result).map(({ level, label }) => ({
        level,
        label: `${level.conversations}, ${label}`,
      })),
    ].map(({ level, label }) => [
      label,
      fmt(level.turnsPerSecond, 1),
      ms(level.turnMs, 0),
      fmt(level.workerRssMb, 0, ' MB'),
      ms(level.cpuMsPerTurn.server),
      ms(level.cpuMsPerTurn.worker),
      ms(level.cpuMsPerTurn.driver),
    ]),
  )}\n\nThe rows that say \`liveSearchAttributes: false\` measured conversations started so: no \`YiemStatus\`, \`YiemTurns\` or \`YiemCost\` upserts (two visibility writes a turn fewer). The rows that say \`modelPolicy.localActivity\` measured conversations whose model calls nobody follows run as local activities: a text turn is one workflow task, with no activity task. CPU per turn is the CPU time (user + system, from /proc, 10 ms ticks) each process used during the window divided by the turns completed. It bounds throughput whatever the load: with ${cpuBound(result).toFixed(1)} ms of server + worker CPU per turn, two otherwise idle cores could complete at most about ${(2000 / cpuBound(result)).toFixed(0)} turns per second.`;
}

/** What a figure of ours adds to the floor's: milliseconds over it and the ratio, unless the floor is near zero. */
const overFloor = (ours: number | undefined, floor: number, decimals: number, unit: string): string => {
  if (ours === undefined) return 'not measured in this run';
  const over = `${ours - floor >= 0 ? '+' : ''}${(ours - floor).toFixed(decimals)}${unit}`;
  return Math.abs(floor) < MEANINGFUL_BASELINE_MS ? over : `${over} (${(ours / floor).toFixed(2)} ×)`;
};
const timesFloor = (ours: number | undefined, floor: number): string =>
  ours === undefined ? 'not measured in this run' : `${(ours / floor).toFixed(2)} ×`;
const oursFigure = (figure: string | undefined): string => figure ?? 'not measured in this run';
const cpuSum = (cpu: { server: Summary; worker: Summary }) => cpu.server.median + cpu.worker.median;
const cpuText = (cpu: { server: Summary; worker: Summary }) =>
  `${cpuSum(cpu).toFixed(1)} ms (server ${cpu.server.median.toFixed(1)}, worker ${cpu.worker.median.toFixed(1)})`;

/** The goals of issues 25 and 49 that the bare workflow itself misses on this machine (section (l)). */
function goalsBelowFloor(floor: FloorResult): string[] {
  const below: string[] = [];
  const perCall = floor.perToolMs.activity.median;
  if (perCall > 5)
    below.push(`≤ 5 ms per sequential tool call as an activity (the floor: ${perCall.toFixed(1)} ms)`);
  const localCall = floor.perToolMs.local.median;
  if (localCall > 5)
    below.push(`≤ 5 ms per sequential tool call as a local activity (${localCall.toFixed(1)} ms)`);
  const batchedEfficiency = parallelEfficiency(floor.parallelBatchMs.batched.median);
  if (batchedEfficiency < 0.92)
    below.push(
      `batched parallel efficiency ≥ 0.92 (${batchedEfficiency.toFixed(2)} with the ${PARALLEL_TOOLS} in one activity)`,
    );
  const efficiency = parallelEfficiency(floor.parallelBatchMs.activity.median);
  const localEfficiency = parallelEfficiency(floor.parallelBatchMs.local.median);
  if (Math.max(efficiency, localEfficiency) < 0.95)
    below.push(
      `parallel efficiency ≥ 0.95 (${efficiency.toFixed(2)} with activities, ${localEfficiency.toFixed(2)} with local activities)`,
    );
  const busyCpu = cpuSum(floor.throughput.cpuMsPerTurn);
  const quietCpu = cpuSum(floor.textTurn.cpuMs);
  if (Math.max(busyCpu, quietCpu) > 30)
    below.push(
      `≤ 30 ms of CPU per text turn at every concurrency (${quietCpu.toFixed(1)} ms at 1 conversation, ${busyCpu.toFixed(1)} at ${floor.throughput.conversations})`,
    );
  const rate = floor.throughput.turnsPerSecond.median;
  if (rate < 100)
    below.push(`≥ 100 turns/s at ${floor.throughput.conversations} conversations (${rate.toFixed(1)})`);
  return below;
}

function floorSection(floor: FloorResult, all: BenchResults): string {
  const { overhead, parallel, throughput } = all;
  const oneConversation = throughput?.levels.find((level) => level.conversations === 1);
  const busiest = throughput?.levels.find((level) => level.conversations === floor.throughput.conversations);
  const batchRow = (label: string, floorBatch: Summary, ours: Summary | undefined) => [
    label,
    `${ms(floorBatch, 0)}, efficiency ${parallelEfficiency(floorBatch.median).toFixed(2)}`,
    oursFigure(ours && `${ms(ours, 0)}, efficiency ${parallelEfficiency(ours.median).toFixed(2)}`),
    overFloor(ours?.median, floorBatch.median, 0, ' ms'),
  ];
  const below = goalsBelowFloor(floor);
  return `## (l) The platform's floor: a bare Temporal workflow\n\nThe shapes of sections (a), (b) and (e) on a workflow with nothing of yiem-agent in it (\`bench/floor/\`, not part of the product): a turn is an Update that calls the same scripted model over HTTP in an activity, runs the tools the reply asks for (the same no-op and 200 ms tools, as activities, as local activities or all in one activity, as our \`batched\` tools run) and calls the model again; no events, no search attributes, no context by reference, no transcript. Its own worker process with default options, on the same dev server, in this run. The fewest steps a durable agent on Temporal takes, so what these cores allow any such agent; yiem-agent's figures are this run's sections (a), (b) and (e). ${floor.runs} runs (${OVERHEAD_TOOL_CALLS} sequential no-op calls against a turn with one, as (a); ${PARALLEL_TOOLS} × 200 ms in parallel, as (b)); ${floor.throughput.conversations} conversations for ${floor.throughput.seconds} s, as (e).\n\n${table(
    ['figure', 'bare workflow', 'yiem-agent', 'yiem-agent over the floor'],
    [
      [
        'per sequential tool call, activities',
        ms(floor.perToolMs.activity, 2),
        oursFigure(overhead && ms(overhead.ours.perToolMs, 2)),
        overFloor(overhead?.ours.perToolMs.median, floor.perToolMs.activity.median, 2, ' ms'),
      ],
      [
        'per sequential tool call, local activities',
        ms(floor.perToolMs.local, 2),
        oursFigure(overhead?.oursLocalActivity && ms(overhead.oursLocalActivity.perToolMs, 2)),
        overFloor(overhead?.oursLocalActivity?.perToolMs.median, floor.perToolMs.local.median, 2, ' ms'),
      ],
      [
        'per sequential tool call, one activity for all',
        ms(floor.perToolMs.batched, 2),
        oursFigure(overhead?.oursBatched && ms(overhead.oursBatched.perToolMs, 2)),
        overFloor(overhead?.oursBatched?.perToolMs.median, floor.perToolMs.batched.median, 2, ' ms'),
      ],
      batchRow(
        `${PARALLEL_TOOLS} × 200 ms in parallel, activities: batch`,
        floor.parallelBatchMs.activity,
        parallel?.ours.parallel.batchMs,
      ),
      batchRow(
        `${PARALLEL_TOOLS} × 200 ms in parallel, local activities: batch`,
        floor.parallelBatchMs.local,
        parallel?.ours.parallelLocalActivity?.batchMs,
      ),
      batchRow(
        `${PARALLEL_TOOLS} × 200 ms in parallel, one activity for all: batch`,
        floor.parallelBatchMs.batched,
        parallel?.ours.parallelBatched?.batchMs,
      ),
      [
        'plain text turn, one conversation',
        ms(floor.textTurn.ms),
        oursFigure(overhead && ms(overhead.ours.plainTurnMs)),
        overFloor(overhead?.ours.plainTurnMs.median, floor.textTurn.ms.median, 1, ' ms'),
      ],
      [
        'CPU per text turn (server + worker), one conversation',
        cpuText(floor.textTurn.cpuMs),
        oursFigure(oneConversation && cpuText(oneConversation.cpuMsPerTurn)),
        overFloor(
          oneConversation && cpuSum(oneConversation.cpuMsPerTurn),
          cpuSum(floor.textTurn.cpuMs),
          1,
          ' ms',
        ),
      ],
      [
        `CPU per text turn (server + worker), ${floor.throughput.conversations} conversations`,
        cpuText(floor.throughput.cpuMsPerTurn),
        oursFigure(busiest && cpuText(busiest.cpuMsPerTurn)),
        overFloor(busiest && cpuSum(busiest.cpuMsPerTurn), cpuSum(floor.throughput.cpuMsPerTurn), 1, ' ms'),
      ],
      [
        `turns per second, ${floor.throughput.conversations} conversations`,
        fmt(floor.throughput.turnsPerSecond, 1),
        oursFigure(busiest && fmt(busiest.turnsPerSecond, 1)),
        timesFloor(busiest?.turnsPerSecond.median, floor.throughput.turnsPerSecond.median),
      ],
    ],
  )}\n\n${
    below.length > 0
      ? `Goals the bare workflow itself misses on this machine, so that no change inside yiem-agent can meet them here: ${below.join('; ')}.`
      : 'The bare workflow meets every latency, CPU and throughput goal on this machine.'
  } The plain turn of (a) is timed on the conversation that also runs (a)'s tool turns; the CPU figures of ours are (e)'s.`;
}

function rateLimitSection(result: RateLimitResult): string {
  const { conversations, turnsEach, providerPerSecond: n } = result;
  return `## (r) A rate-limited provider shared by ${conversations} conversations\n\n${conversations} conversations send ${turnsEach} turn${turnsEach === 1 ? '' : 's'} each, all at once, to one model whose provider answers 429 (Retry-After: 1 s) above ${n} requests in any one second (the scripted model's \`rateLimit\`). \`queue\`: the model has \`rateLimit: { requestsPerMinute: ${n * 60} }\`, so its calls go through \`<queue>-model-<name>\` with the server's task-queue-wide rate; \`none\`: no limit on our side, only the provider's 429s and the default retry policy (5 attempts). One in-process worker. The scripted provider counts per second, stricter than providers that count per minute: the server's task-queue rate (a token bucket) lets about one second's worth of calls through above the rate, so the queue still meets a few 429s, each costing its call the 1 s of Retry-After.\n\n${table(
    [
      'mode',
      'turns completed',
      'turns failed',
      '429s',
      'calls served per second',
      'peak in any second',
      'median turn',
      'longest turn',
    ],
    result.runs.map((run) => [
      run.mode,
      String(run.completedTurns),
      String(run.failedTurns),
      String(run.rateLimited),
      run.callsPerSecond.toFixed(1),
      String(run.peakPerSecond),
      `${(run.turnMs.median / 1000).toFixed(1)} s`,
      `${(run.turnMs.max / 1000).toFixed(1)} s`,
    ]),
  )}`;
}

/** Server + worker CPU per turn at the highest concurrency measured. */
function cpuBound(result: ThroughputResult): number {
  const level = result.levels.at(-1);
  return level ? level.cpuMsPerTurn.server.median + level.cpuMsPerTurn.worker.median : Number.NaN;
}

function idleSection(result: IdleMemoryResult): string {
  const n = (value: number) => value.toLocaleString('en');
  const tenThousand =
    result.conversations >= 10_000
      ? `**${n(result.conversations)} idle conversations: ${result.afterRssMb.toFixed(0)} MB of worker RSS, measured.**`
      : `**10,000 idle conversations: ${result.extrapolatedTenThousandMb.toFixed(0)} MB, extrapolated, not measured** (RSS at ${n(result.conversations)} plus the slope for the other ${n(10_000 - result.conversations)}, as if every conversation stayed cached; a full run measures 10,000).`;
  return `### Idle open conversations

${n(result.conversations)} conversations were started on a fresh worker process (default options) and each ran one turn (${result.seconds.toFixed(0)} s), then left open. Memory after a forced GC, one run, at ${n(result.firstConversations)} and at ${n(result.conversations)} conversations; the worker's one-time start-up costs (fresh: ${result.freshRssMb.toFixed(0)} MB RSS) are in both readings.

${table(
  ['', 'RSS', 'V8 heap used'],
  [
    [
      `${n(result.firstConversations)} idle conversations`,
      `${result.firstRssMb.toFixed(0)} MB`,
      `${result.firstHeapMb.toFixed(0)} MB`,
    ],
    [
      `${n(result.conversations)} idle conversations`,
      `${result.afterRssMb.toFixed(0)} MB`,
      `${result.afterHeapMb.toFixed(0)} MB`,
    ],
    [
      'growth per 1,000 between the readings',
      `${result.perThousandRssMb.toFixed(1)} MB`,
      `${result.perThousandHeapMb.toFixed(1)} MB`,
    ],
  ],
)}

${tenThousand} The worker's workflow cache is bounded (\`maxCachedWorkflows\`, by default derived from the V8 heap limit: ${n(result.maxCachedWorkflows)} workflows in this worker) and so is the model-context cache (2,000 conversations). Conversations beyond those bounds stay open in Temporal and cost the worker nothing until their next message, which replays their history: a turn of the first conversation started took ${result.oldestTurnMs.toFixed(0)} ms after the others, against ${result.newestTurnMs.toFixed(0)} ms for the last one started.

`;
}

function crashSection(result: CrashRecoveryResult): string {
  return `## (f) Crash recovery\n\nA worker process runs a tool that works ${CRASH_TOOL_MS} ms and heartbeats; ${KILL_AFTER_MS} ms in, the process is SIGKILLed and a fresh worker process is started on the same task queue at once. The tool's heartbeat timeout is ${CRASH_HEARTBEAT_TIMEOUT} and its retry interval 100 ms. ${result.runs} runs; times from the SIGKILL.\n\n${table(
    ['event', 'time after SIGKILL'],
    [
      ['fresh worker process reports ready', ms(result.workerStartMs, 0)],
      ['tool attempt 2 starts on the fresh worker', ms(result.retryStartMs, 0)],
      ['tool completes', ms(result.toolDoneMs, 0)],
      ['turn completes (prompt Update returns)', ms(result.turnDoneMs, 0)],
    ],
  )}\n\nThe heartbeat timeout bounds detection: the server times the attempt out ${CRASH_HEARTBEAT_TIMEOUT} after the last heartbeat it received, then schedules attempt 2 after the retry interval. A tool without heartbeats would wait for its start-to-close timeout (default 5 minutes) instead.`;
}

function largeContentSection(result: LargeContentResult): string {
  return `## (i) History and worker memory vs content size\n\nOne conversation of ${result.turns} turns on a fresh worker process: every user message is ${LARGE_MESSAGE_BYTES.toLocaleString('en')} bytes, and every ${TOOL_EVERY}th turn the model calls a tool that returns ${TOOL_RESULT_KB} KB, which it reads whole. The conversation continues as new every ${TURNS_PER_RUN} turns. Each row covers the turns since the previous one; history bytes are as the server stores them (payloads over the 32 KB threshold are references into the payload store); worker memory is read after a forced GC. One run.\n\n${table(
    [
      'turn',
      'content so far',
      'most history one turn added',
      'largest run history',
      'largest payload in history',
      'median turn',
      'worker RSS',
      'V8 heap used',
    ],
    result.points.map((point) => [
      String(point.turn),
      `${point.contentMb.toFixed(1)} MB`,
      kb(point.maxTurnAddedBytes),
      kb(point.runHistoryBytes),
      kb(point.largestPayloadBytes),
      ms(point.turnMs, 0),
      `${point.workerRssMb.toFixed(0)} MB`,
      `${point.workerHeapMb.toFixed(0)} MB`,
    ]),
  )}`;
}

function largeResultsSection(points: LargeResultPoint[]): string {
  return `## (j) A ${LARGE_RESULT_KB / 1024} MB tool result beside a bystander conversation\n\nOn one fresh worker process, a tool of each kind returns ${LARGE_RESULT_KB / 1024} MB of text (cut to the 4 MB \`maxToolResultBytes\`, with its note to the model) while a second conversation on the same worker sends one short turn after another until the big turn has answered. The event-loop figure is the worker's longest block during the big turn (\`perf_hooks.monitorEventLoopDelay\`, 10 ms resolution); RSS is read after a forced GC, before the big turn and after both conversations ended. One run per kind.\n\n${table(
    [
      'tool',
      'what the model read',
      'big turn',
      "bystander's turns",
      "bystander's longest turn",
      'event loop max delay',
      'worker RSS before → after',
    ],
    points.map((point) => [
      point.kind,
      point.outcome,
      `${point.bigTurnMs.toFixed(0)} ms`,
      String(point.bystanderTurns),
      `${point.bystanderLongestMs.toFixed(0)} ms`,
      `${point.eventLoopMaxMs.toFixed(0)} ms`,
      `${point.rssBeforeMb.toFixed(0)} → ${point.rssAfterMb.toFixed(0)} MB`,
    ]),
  )}`;
}

function floodSection(result: FloodResult): string {
  const megabytes = result.floodChars / 1e6;
  const times = ({ medianMs, longestMs }: TurnTimes) => `${medianMs.toFixed(0)} / ${longestMs.toFixed(0)} ms`;
  const row = (flood: string, run: BystanderRun): string[] => [
    flood,
    `${run.floodTurnMs.toFixed(0)} ms`,
    times(run.alone),
    String(run.beside.turns),
    times(run.beside),
    `${run.elsewhere.turns}: ${times(run.elsewhere)}`,
    `${run.eventLoopMaxMs.toFixed(0)} ms`,
    `${run.rssBeforeMb.toFixed(0)} → ${run.rssAfterMb.toFixed(0)} MB`,
  ];
  const rows = [
    row(
      `${megabytes} MB reply in ${result.deltaChars}-character deltas (about ${Math.round(result.floodChars / result.deltaChars).toLocaleString('en')})`,
      result,
    ),
    ...(result.console
      ? [
          row(
            `a written tool's ${result.console.lines.toLocaleString('en')} console.log calls`,
            result.console,
          ),
        ]
      : []),
  ];
  return `## (m) Floods beside a bystander conversation\n\nOn a fresh worker process each: the scripted model (in a process of its own) streams ${megabytes} MB of text in ${result.deltaChars}-character deltas to one conversation, or a written tool logs ${CONSOLE_FLOOD_LINES.toLocaleString('en')} lines in one call, while a second conversation on the same worker sends one short turn after another until the flood's turn has answered. Before the flood the bystander takes ${ALONE_TURNS} turns alone: what the machine gives a turn without it; during the flood a second bystander talks to another worker process, which tells what the flood costs a turn through the machine (its CPU, the server) from what it costs through the worker it runs on. The worker gathers the deltas into \`textDelta\` events by time and size and caps the sandbox's console. Goal: no bystander turn longer than ${FLOOD_BYSTANDER_GOAL_MS} ms. The event-loop figure is the worker's longest block over its life (\`perf_hooks.monitorEventLoopDelay\`); RSS is read after a forced GC. One run each.\n\n${table(
    [
      'flood',
      'flood turn',
      'bystander alone: median / longest',
      "bystander's turns beside it",
      'beside it: median / longest',
      'on another worker meanwhile: turns, median / longest',
      'event loop max delay',
      'worker RSS before → after',
    ],
    rows,
  )}`;
}

/**
 * The goal row against the peer's local-activity model call: judged on ours configured alike
 * (`modelPolicy.localActivity`) when the run has it, run by run, as the per-tool goal against the
 * peer is (the sides ran moments apart); ours by default is shown beside it.
 */
function plainTurnAgainstLocalPeer(peer: PeerResult): GoalFigure {
  const peerMs = `${peer.plainTurnMs.peerLocalActivity.median.toFixed(0)} ms for the peer with its model call as a local activity`;
  const byDefault = `${peer.plainTurnMs.ours.median.toFixed(0)} ms`;
  const local = peer.oursLocalModelCalls;
  const ratio = local ? local.ratios.plainTurnMs : peer.ratios.plainTurnMsOverLocalActivity;
  return {
    measured: local
      ? `${local.plainTurnMs.median.toFixed(0)} ms with \`modelPolicy.localActivity\` against ${peerMs}; ${byDefault} with ours an activity (${ratioRange(peer.ratios.plainTurnMsOverLocalActivity)})`
      : `${byDefault} against ${peerMs}`,
    gap: over(ratio.median, 1, 2, ' ×'),
    met: ratio.median <= 1,
    peer: ratioRange(ratio),
  };
}

function cpuRows(cpu: PeerResult['cpuMsPerTextTurn'], local: LocalModelCallsSide | undefined): string[][] {
  const total = (side: 'ours' | 'peer' | 'peerLocalActivity') =>
    cpu.server[side].median + cpu.worker[side].median;
  const localRows = local
    ? [
        [
          'server + worker CPU per plain text turn, both model calls local activities',
          `${cpuSum(local.cpuMsPerTextTurn).toFixed(1)} ms`,
          `${total('peerLocalActivity').toFixed(1)} ms`,
          ratioRange(local.ratios.cpuMsPerTextTurn),
        ],
      ]
    : [];
  return [
    [
      'server CPU per plain text turn',
      ms(cpu.server.ours),
      ms(cpu.server.peer),
      ratioOf(cpu.server.ours.median, cpu.server.peer.median),
    ],
    [
      'worker CPU per plain text turn',
      ms(cpu.worker.ours),
      ms(cpu.worker.peer),
      ratioOf(cpu.worker.ours.median, cpu.worker.peer.median),
    ],
    [
      "server + worker CPU per plain text turn, the peer's model call an activity",
      `${total('ours').toFixed(1)} ms`,
      `${total('peer').toFixed(1)} ms`,
      ratioRange(cpu.ratio),
    ],
    [
      "server + worker CPU per plain text turn, the peer's model call a local activity",
      `${total('ours').toFixed(1)} ms`,
      `${total('peerLocalActivity').toFixed(1)} ms`,
      ratioRange(cpu.ratioOverLocalActivity),
    ],
    ...localRows,
  ];
}

/** The goal row's peer cell: RSS at the same count, or per conversation when the peer stopped short. */
function peerIdleFigure(idle: PeerResult['idleMemory']): string {
  if (idle.reached.peer === idle.reached.ours) {
    return `${ratioOf(idle.rssMb.ours, idle.rssMb.peer)} at ${idle.conversations.toLocaleString('en')} (one run)`;
  }
  const peerMb = perIdleConversationMb(idle, 'peer');
  if (peerMb === undefined) return `– (the peer stopped before its first reading: ${idle.peerStoppedBy})`;
  const ratio = ratioOf(perIdleConversationMb(idle, 'ours') ?? 0, peerMb);
  return `${ratio} per conversation (one run; the peer stopped at ${idle.reached.peer.toLocaleString('en')})`;
}

/** Worker RSS each idle conversation added, in MB: a fair ratio even when the peer stopped short. */
function perIdleConversationMb(idle: PeerResult['idleMemory'], side: 'ours' | 'peer'): number | undefined {
  if (idle.reached[side] === 0) return undefined;
  return (idle.rssMb[side] - idle.freshRssMb[side]) / idle.reached[side];
}

function idleMemoryRows(idle: PeerResult['idleMemory']): string[][] {
  const mb = (value: number) => `${value.toFixed(0)} MB`;
  const at = (side: 'ours' | 'peer') =>
    idle.reached[side] === idle.conversations ? '' : ` at ${idle.reached[side].toLocaleString('en')}`;
  const level = idle.reached.ours === idle.reached.peer;
  const perConversation = {
    ours: perIdleConversationMb(idle, 'ours'),
    peer: perIdleConversationMb(idle, 'peer'),
  };
  return [
    [
      'worker RSS, fresh',
      mb(idle.freshRssMb.ours),
      mb(idle.freshRssMb.peer),
      ratioOf(idle.freshRssMb.ours, idle.freshRssMb.peer),
    ],
    [
      `worker RSS with ${idle.conversations.toLocaleString('en')} idle conversations`,
      `${mb(idle.rssMb.ours)}${at('ours')}`,
      `${mb(idle.rssMb.peer)}${at('peer')}${idle.peerStoppedBy ? ` (stopped ${idle.peerStoppedBy})` : ''}`,
      level ? ratioOf(idle.rssMb.ours, idle.rssMb.peer) : '',
    ],
    [
      'worker RSS added per idle conversation',
      perConversation.ours === undefined ? '–' : `${perConversation.ours.toFixed(2)} MB`,
      perConversation.peer === undefined ? '–' : `${perConversation.peer.toFixed(2)} MB`,
      perConversation.ours === undefined || perConversation.peer === undefined
        ? ''
        : ratioOf(perConversation.ours, perConversation.peer),
    ],
    [
      `worker heap with ${idle.conversations.toLocaleString('en')} idle conversations`,
      `${mb(idle.heapMb.ours)}${at('ours')}`,
      `${mb(idle.heapMb.peer)}${at('peer')}`,
      level ? ratioOf(idle.heapMb.ours, idle.heapMb.peer) : '',
    ],
    [
      "the worker's workflow cache (maxCachedWorkflows)",
      String(idle.maxCachedWorkflows.ours),
      String(idle.maxCachedWorkflows.peer),
      '',
    ],
  ];
}

function peerSection(result: PeerResult): string {
  const rows = [
    [
      'durability per sequential tool call',
      ms(result.perToolMs.ours),
      ms(result.perToolMs.peer),
      ratioRange(result.ratios.perToolMs),
    ],
    ...(result.oursLocalActivity
      ? [
          [
            'durability per sequential tool call, ours `localActivity`',
            ms(result.oursLocalActivity.perToolMs),
            ms(result.perToolMs.peer),
            ratioRange(result.oursLocalActivity.ratios.perToolMs),
          ],
        ]
      : []),
    [
      "plain text turn, the peer's model call an activity",
      ms(result.plainTurnMs.ours),
      ms(result.plainTurnMs.peer),
      ratioRange(result.ratios.plainTurnMs),
    ],
    [
      "plain text turn, the peer's model call a local activity",
      ms(result.plainTurnMs.ours),
      ms(result.plainTurnMs.peerLocalActivity),
      ratioRange(result.ratios.plainTurnMsOverLocalActivity),
    ],
    ...(result.oursLocalModelCalls
      ? [
          [
            'plain text turn, both model calls local activities (ours `modelPolicy.localActivity`)',
            ms(result.oursLocalModelCalls.plainTurnMs),
            ms(result.plainTurnMs.peerLocalActivity),
            ratioRange(result.oursLocalModelCalls.ratios.plainTurnMs),
          ],
        ]
      : []),
    [
      'parallel efficiency, 8 × 200 ms',
      fmt(result.parallelEfficiency.ours, 2),
      fmt(result.parallelEfficiency.peer, 2),
      ratioRange(result.ratios.parallelEfficiency),
    ],
    ...(result.oursLocalActivity
      ? [
          [
            'parallel efficiency, 8 × 200 ms, ours `localActivity`',
            fmt(result.oursLocalActivity.parallelEfficiency, 2),
            fmt(result.parallelEfficiency.peer, 2),
            ratioRange(result.oursLocalActivity.ratios.parallelEfficiency),
          ],
        ]
      : []),
    ...cpuRows(result.cpuMsPerTextTurn, result.oursLocalModelCalls),
    ...idleMemoryRows(result.idleMemory),
    ...result.history.flatMap((point) => [
      [
        `history events added by text turn ${point.turn}`,
        String(point.events.ours),
        String(point.events.peer),
        ratioOf(point.events.ours, point.events.peer),
      ],
      [
        `history bytes added by text turn ${point.turn}`,
        kb(point.bytes.ours),
        kb(point.bytes.peer),
        ratioOf(point.bytes.ours, point.bytes.peer),
      ],
    ]),
    ...(result.historyAgainstLocal ?? []).map((point) => [
      `history bytes added by text turn ${point.turn}, 2,000-byte messages, against the peer's model call as a local activity`,
      kb(point.bytes.ours),
      kb(point.bytes.peer),
      ratioOf(point.bytes.ours, point.bytes.peer),
    ]),
    ...(result.historyLocalAgainstLocal ?? []).map((point) => [
      `the same, ours with \`modelPolicy.localActivity\`, text turn ${point.turn}`,
      kb(point.bytes.ours),
      kb(point.bytes.peer),
      ratioOf(point.bytes.ours, point.bytes.peer),
    ]),
    ...(result.actions
      ? [
          [
            'Actions per text turn',
            String(result.actions.textTurn.ours),
            String(result.actions.textTurn.peer),
            ratioOf(result.actions.textTurn.ours, result.actions.textTurn.peer),
          ],
          [
            'Actions per turn with two tool calls',
            String(result.actions.toolTurn.ours),
            String(result.actions.toolTurn.peer),
            ratioOf(result.actions.toolTurn.ours, result.actions.toolTurn.peer),
          ],
        ]
      : []),
  ];
  return [
    "## (p) Side by side with Temporal's own agent integration",
    '',
    `\`@temporalio/openai-agents\` 1.23.0 on \`@openai/agents-core\` 0.11 (bench/peer/: a \`TemporalOpenAIRunner\` per turn over a \`WorkflowSafeMemorySession\`, tools as activities with \`activityAsTool\`, a Chat Completions model pointed at the same scripted server; its model call a regular activity, its default, except in the rows that say a local activity: \`useLocalActivity: true\` in the plugin's \`modelParams\`, a chat of its own on the same worker after the same turns; the rows that say ours \`localActivity\` run our same tools declared \`localActivity: true\` in conversations of their own, against the peer's tools as activities, since \`activityAsTool\` makes activities; the rows that say both model calls local activities run ours in a conversation of its own started with \`modelPolicy: { localActivity: true }\`, against the peer's \`useLocalActivity\` chat), on the same dev server in the same run, the sides alternating run by run; ${result.runs} runs, each in fresh conversations on every side (the peer's session travels whole in each of its model calls, so a chat kept across runs would make its calls grow and not ours). Per sequential tool call as (a): (turn with ${OVERHEAD_TOOL_CALLS} calls − turn with one) / ${OVERHEAD_TOOL_CALLS - 1}, both turns making two model calls. Each side's worker runs in a worker process of its own, whose CPU (from /proc) and memory (after a forced GC) the rows read; the CPU rows read ${result.cpuMsPerTextTurn.turnsPerReading} plain text turns at a time on sequential chats started for them, the same number of turns on every side. Ratio: ours over the peer's, for the timed figures median (min–max) of the run-by-run ratios (below 1 is fewer milliseconds, events, bytes or Actions for ours; above 1 is better for efficiency).`,
    '',
    table(['', 'yiem-agent', 'openai-agents (peer)', 'ratio'], rows),
  ].join('\n');
}
