import { Command, Option } from 'commander';
import { DEFAULT_MODEL, OPENAI_DEFAULT_BASE_URL } from '../../activities/models/settings.ts';
import { CONVERSATION_STATUSES } from '../contract/searchAttributes.ts';
import { MESSAGE_DELIVERIES } from '../contract/settings.ts';
import { describeThrown } from '../contract/thrown.ts';
import { packageVersion } from '../infrastructure/packageVersion.ts';
import { codecServerCommand } from './codecServer.ts';
import {
  approveCommand,
  cancelCommand,
  chatCommand,
  compactCommand,
  consoleCommand,
  DEFAULT_SYSTEM_PROMPT,
  denyCommand,
  devCommand,
  historyCommand,
  listCommand,
  sendCommand,
  serverCommand,
  statusCommand,
  sweepPayloadsCommand,
  upgradeCommand,
  workerCommand,
} from './commands.ts';
import { doctorCommand } from './doctor.ts';
import { cliEnvironment } from './environment.ts';
import { evalCommand } from './evals.ts';
import { forkCommand, rewindCommand } from './forkRewind.ts';
import { exportHistoriesCommand, replayCheckCommand } from './histories.ts';
import { budgetCommand, pauseCommand, resumeCommand } from './safePointCommands.ts';
import { scheduleCreateCommand, scheduleDeleteCommand, scheduleListCommand } from './schedules.ts';
import { selfWritingOptions } from './selfWritingFlags.ts';
import { turnsCollectCommand, turnsListCommand, turnsWatchCommand } from './turns.ts';

const MCP_FLAG_HELP = 'offer the tools of the MCP servers in this JSON file ({"mcpServers": {...}})';

const program = new Command('yiem')
  .description('Durable LLM agents on Temporal')
  .version(packageVersion(), '-V, --version', 'print the version of yiem-agent')
  .showHelpAfterError();

const ADDRESS_HELP = 'Temporal frontend (env TEMPORAL_ADDRESS, default 127.0.0.1:7233)';

const connectionOptions = (command: Command, addressHelp = ADDRESS_HELP): Command =>
  command
    .option('--address <host:port>', addressHelp)
    .option('--namespace <name>', 'Temporal namespace (env TEMPORAL_NAMESPACE, default "default")')
    .option(
      '--task-queue <name>',
      'task queue (env YIEM_TASK_QUEUE; default "yiem-agent", "yiem-dev" for dev, and for chat and send while a dev runs here)',
    )
    .option('--profile <name>', 'profile of the Temporal config file (env TEMPORAL_PROFILE)');

const chatOptions = (command: Command, addressHelp = ADDRESS_HELP): Command =>
  connectionOptions(command, addressHelp)
    .option('--id <conversationId>', 'resume this conversation (or start it with this id)')
    .option('--system <prompt>', 'system prompt of a new conversation', DEFAULT_SYSTEM_PROMPT)
    .addOption(
      new Option('--mode <mode>', 'tool execution mode of a new conversation')
        .choices(['parallel', 'sequential'])
        .default('parallel'),
    );

const serverOptions = (command: Command, portHelp = 'gRPC port'): Command =>
  command
    .option(
      '--data-dir <dir>',
      'where the SQLite file and the Temporal CLI live (env YIEM_DATA_DIR, default .yiem)',
    )
    .option('--port <port>', portHelp, '7233')
    .option('--ui-port <port>', 'Web UI port (default port + 1000)')
    .option('--headless', 'without the Web UI');

serverOptions(
  program.command('server').description('start the embedded Temporal dev server (SQLite, Web UI)'),
).action(serverCommand);

selfWritingOptions(
  connectionOptions(
    program.command('worker').description('run a worker: conversations, model calls and tools'),
  ),
)
  .option('--tools-dir <dir...>', 'load tool files from these directories')
  .option('--no-builtin-tools', 'do not register getWeather, getTime, listTools and readUserFile')
  .option('--no-workflows', "run only tool activities (a tool's dedicated task queue)")
  .option('--mcp <file>', MCP_FLAG_HELP)
  .option(
    '--models <file>',
    'serve several models from this JSON file ({"models": {...}, "defaultModel", "fallbacks"}; docs/models.md)',
  )
  .option('--deployment-name <name>', 'Worker Versioning: the Worker Deployment (env YIEM_DEPLOYMENT_NAME)')
  .option('--build-id <id>', 'Worker Versioning: this build of it (env YIEM_BUILD_ID)')
  .addHelpText(
    'after',
    `
The model (environment):
  OPENAI_BASE_URL   an OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (default ${OPENAI_DEFAULT_BASE_URL})
  OPENAI_API_KEY    its key
  YIEM_MODEL        the model's name (default ${DEFAULT_MODEL})
With none of OPENAI_BASE_URL and OPENAI_API_KEY set (and no --models), the worker uses the offline demo model and says so.`,
  )
  .action(workerCommand);

program
  .command('codec-server')
  .description('decrypt payloads for the Web UI (keys: YIEM_CODEC_KEYS; token: YIEM_CODEC_SERVER_TOKEN)')
  .option('--host <host>', 'interface to listen on', '127.0.0.1')
  .option('--port <port>', 'port to listen on', '8888')
  .option('--origin <url...>', 'Web UI origins allowed by CORS', ['http://localhost:8233'])
  .action(codecServerCommand);

serverOptions(
  chatOptions(
    program.command('dev').description('server, worker and chat in one process'),
    'use the Temporal server that answers here, and start none (env TEMPORAL_ADDRESS, default 127.0.0.1:7233); wins over --port',
  ),
  'gRPC port of the server dev starts when none answers at --address',
)
  .option('--tools-dir <dir...>', 'load tool files from these directories')
  .option('--mcp <file>', MCP_FLAG_HELP)
  .option('--console-port <port>', 'port of the web console (default 8234, else a free one)')
  .action(devCommand);

chatOptions(
  program
    .command('console')
    .description(
      'the web console: conversations, their turns live, approvals and cancel (token: YIEM_CONSOLE_TOKEN, needed off loopback)',
    ),
)
  .option('--host <host>', 'interface to listen on', '127.0.0.1')
  .option('--port <port>', 'port to listen on (0: a free one)', '8234')
  .option('--web-ui <url>', 'the Temporal Web UI to link to (env YIEM_UI_URL, default gRPC port + 1000)')
  .action(consoleCommand);

chatOptions(program.command('chat').description('chat with a conversation (needs a running worker)')).action(
  chatCommand,
);

chatOptions(program.command('send').description('send one message and print the reply'))
  .argument('<text>', 'the message')
  .option(
    '--detach',
    'return once the message is accepted, printing its conversation and turn (see yiem turns)',
  )
  .addOption(
    new Option(
      '--delivery <delivery>',
      'how the message joins a turn that runs now: steer (its next model call), followUp (the next turn), interrupt (cancels its tools)',
    )
      .choices(MESSAGE_DELIVERIES)
      .default('steer'),
  )
  .option('--key <key>', 'names the message: sent again with the same key, it is added once')
  .action(sendCommand);

const turns = program
  .command('turns')
  .description('messages sent with send (or send --detach): list them, watch or collect their turn');
connectionOptions(
  turns.command('list').description("a conversation's messages sent by send, with their turn's state"),
)
  .argument('<conversationId>')
  .option('--limit <n>', 'the newest this many', '20')
  .action(turnsListCommand);
connectionOptions(
  turns.command('watch').description('follow a turn live until it ends, then print its result'),
)
  .argument('<conversationId>')
  .argument('<turnId>', 'as send --detach printed it')
  .action(turnsWatchCommand);
connectionOptions(
  turns
    .command('collect')
    .description("wait for a turn's result and print it; exits 1 when the turn did not complete"),
)
  .argument('<conversationId>')
  .argument('<turnId>', 'as send --detach printed it')
  .action(turnsCollectCommand);

connectionOptions(program.command('history').description("print a conversation's transcript"))
  .argument('<conversationId>')
  .option('--json', 'as JSON')
  .action(historyCommand);

connectionOptions(
  program
    .command('compact')
    .description("summarise a conversation's older turns now (the transcript stays whole)"),
)
  .argument('<conversationId>')
  .option('--json', 'as JSON')
  .action(compactCommand);

connectionOptions(program.command('approve').description('approve a tool call that waits for approval'))
  .argument('<conversationId>')
  .argument('<approvalId>', 'the approval id, or the tool call id when only one waiting call has it')
  .action(approveCommand);

connectionOptions(program.command('deny').description('deny a tool call that waits for approval'))
  .argument('<conversationId>')
  .argument('<approvalId>', 'the approval id, or the tool call id when only one waiting call has it')
  .option('--reason <text>', 'why; the model reads it')
  .action(denyCommand);

connectionOptions(
  program
    .command('status')
    .description(
      'a conversation’s state and the approvals and callbacks it waits for (without an id: every conversation waiting for approval)',
    ),
)
  .argument('[conversationId]')
  .action(statusCommand);

connectionOptions(program.command('list').description('list conversations, newest first'))
  .addOption(
    new Option('--status <status>', 'only conversations in this status').choices(CONVERSATION_STATUSES),
  )
  .option('--limit <n>', 'at most this many', '50')
  .action(listCommand);
connectionOptions(
  program
    .command('doctor')
    .description(
      "check the server, the task queue's workers, and that they share this client's payload store and codec keys",
    ),
).action(doctorCommand);

connectionOptions(program.command('cancel').description("cancel a conversation's running turn"))
  .argument('<conversationId>')
  .action(cancelCommand);

connectionOptions(
  program
    .command('fork')
    .description('start a new conversation from an earlier turn of one, and print that turn’s new reply'),
)
  .argument('<conversationId>')
  .requiredOption('--at-turn <n>', 'the turn to start from: the fork has the transcript before it')
  .option('--message <text>', 'the user message of that turn, edited (default: the original)')
  .option('--model <name>', "the fork's model (default: the source's)")
  .option('--system <prompt>', "the fork's system prompt (default: the source's)")
  .option('--tools <name...>', "the tools the fork's model is offered (default: the source's)")
  .option('--id <id>', "the fork's conversation id")
  .action(forkCommand);

connectionOptions(
  program
    .command('rewind')
    .description(
      'reset a conversation in place to before a turn (Temporal reset) and print what it discarded',
    ),
)
  .argument('<conversationId>')
  .requiredOption('--to-turn <n>', 'the turn to go back before: it and every later turn are discarded')
  .action(rewindCommand);

connectionOptions(
  program
    .command('upgrade')
    .description("after a deploy: move the queue's idle conversations onto the current worker version now"),
).action(upgradeCommand);

connectionOptions(
  program
    .command('pause')
    .description('pause a conversation: its running turn stops at the next safe point, no turn starts'),
)
  .argument('<conversationId>')
  .option('--refuse', 'refuse new prompts while paused (default: they wait for the resume)')
  .action(pauseCommand);

connectionOptions(
  program.command('resume').description('resume a paused conversation, or a turn stopped at its budget'),
)
  .argument('<conversationId>')
  .action(resumeCommand);

connectionOptions(
  program
    .command('budget')
    .description("show a conversation's budget and spend; change its limits, and resume a stopped turn"),
)
  .argument('<conversationId>')
  .option('--turn <limits>', 'per-turn limits, e.g. cost=0.5,modelCalls=20 (none removes one)')
  .option('--conversation <limits>', 'limits of the whole conversation, e.g. cost=5,toolCalls=200')
  .option('--resume', 'then resume the stopped turn')
  .action(budgetCommand);

connectionOptions(
  program
    .command('export-histories')
    .description(
      'write the histories of conversation runs to a folder, one JSON file per run, for replay-check',
    ),
)
  .argument('<dir>', 'the folder (created when missing)')
  .option('--query <query>', "a visibility query (default: WorkflowType = 'conversationWorkflow')")
  .option('--limit <n>', 'at most this many runs', '100')
  .action(exportHistoriesCommand);

connectionOptions(
  program
    .command('eval')
    .description(
      'replay kept conversations turn by turn on the agent of --task-queue, with their recorded tool results, and score them',
    ),
)
  .argument('[conversationIds...]', 'the kept conversations')
  .option('--query <query>', 'or the ones a visibility query finds, e.g. "YiemAgent = \'support\'"')
  .option(
    '--histories <paths...>',
    'or the ones in exported history files (yiem export-histories): folders or files',
  )
  .option(
    '--mode <mode>',
    'recorded (no tool runs) or live (tools run, at-most-once ones only if allowed)',
    'recorded',
  )
  .option('--allow-at-most-once', 'in live mode, run at-most-once tools too')
  .option('--stand-ins <file>', 'JSON { tool: result text } for calls that match no kept call')
  .option('--expectations <file>', 'JSON { all?, cases? } of expectations (docs/evals.md)')
  .option(
    '--judge-url <url>',
    'an OpenAI-compatible endpoint that judges each case (key: env YIEM_JUDGE_API_KEY)',
  )
  .option('--judge-model <name>', "the judge's model")
  .option('--rubric <text>', "the judge's rubric for cases whose expectations name none")
  .option('--system <prompt>', "the candidate's system prompt instead of the kept one")
  .option('--model <name>', "the candidate's model instead of the kept one")
  .option('--concurrency <n>', 'cases replayed at once', '4')
  .option(
    '--baseline <file>',
    "a previous run's JSON report: cases that passed there and fail now are regressions",
  )
  .option('--run-id <id>', 'names the run; the same id again resumes it')
  .option('--json <file>', 'write the report as JSON')
  .option('--html <file>', 'write the report as an HTML page, turns side by side')
  .option('--fail-under <rate>', 'exit 1 when the pass rate is under this, e.g. 0.9')
  .action(evalCommand);

program
  .command('replay-check')
  .description(
    'replay a folder of exported histories against this code; exit 1 naming each conversation and event that no longer replays',
  )
  .argument('<dir>', 'the folder of history files (*.json)')
  .option('--workflows <file>', "your worker's workflows module, if it has its own (default: yiem's)")
  .action(replayCheckCommand);

const schedule = program
  .command('schedule')
  .description('prompts sent on a timetable, to a conversation or a new one per run');
connectionOptions(
  schedule
    .command('create')
    .description('send TEXT on a timetable: to --conversation ID, else to a new conversation per run'),
)
  .argument('<scheduleId>', 'the schedule id, to list and delete it by')
  .argument('<text>', 'the message sent on each run')
  .option('--every <interval>', 'how often, e.g. 30s, 15m, 1h, 1d')
  .option('--cron <expression>', 'when, as a cron expression in UTC, e.g. "0 9 * * MON-FRI"')
  .option('--conversation <conversationId>', 'the existing conversation each run posts the message to')
  .option('--system <prompt>', 'system prompt of the new conversation of each run', DEFAULT_SYSTEM_PROMPT)
  .addOption(
    new Option('--mode <mode>', 'tool execution mode of the new conversation of each run')
      .choices(['parallel', 'sequential'])
      .default('parallel'),
  )
  .action(scheduleCreateCommand);
connectionOptions(schedule.command('list').description('list the prompt schedules')).action(
  scheduleListCommand,
);
connectionOptions(schedule.command('delete').description('delete a prompt schedule'))
  .argument('<scheduleId>')
  .action(scheduleDeleteCommand);

const payloads = program.command('payloads').description('the payload store of large messages and results');
connectionOptions(
  payloads
    .command('sweep')
    .description(
      'delete the S3 payloads of conversations Temporal no longer has (deleted or past retention)',
    ),
)
  .option('--dry-run', 'only print what would be deleted')
  .option('--min-age <minutes>', 'keep payloads younger than this (a conversation being started)', '60')
  .action(sweepPayloadsCommand);

try {
  await program.parseAsync();
} catch (error) {
  const message = describeThrown(error);
  console.error(`yiem: ${message}`);
  const env = cliEnvironment();
  if (env.YIEM_DEBUG) console.error(error);
  process.exitCode = 1;
}
// A command is done when its promise settles: what it left open (a retrying call, an idle
// connection) must not keep the process alive or crash it afterwards. Its output goes first: on a
// pipe, stdout is asynchronous and exit would cut a long transcript short.
await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
process.exit();
