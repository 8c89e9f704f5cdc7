/**
 * Every size limit of yiem-agent, in one place: what a message, a tool call, a tool result, an event
 * and a cache may weigh, and how long a text shown in one line may be. Most keep a Temporal payload
 * (2 MB by default) or a workflow's memory small; each says what it protects. Workflow-safe.
 */

// --- Messages and transcript (UTF-8 bytes) ---------------------------------------------------

/** A conversation's `maxMessageBytes` when it sets none. */
export const DEFAULT_MAX_MESSAGE_BYTES = 100_000;

/**
 * The largest `maxMessageBytes` a conversation may set, and the largest system prompt: a message
 * travels in one Temporal payload, whose limit is 2 MB by default, next to the rest of its request.
 */
export const MAX_MESSAGE_BYTES_LIMIT = 1_000_000;

/**
 * How many message keys (`DeliveryOptions.key`, or a `prompt`'s Update id) a conversation remembers
 * to add each message once: the latest ones, carried across continue-as-new (about 256 × 200 bytes at most).
 */
export const MAX_SEEN_MESSAGE_KEYS = 256;

/** The longest message key (`DeliveryOptions.key`), in characters. */
export const MAX_MESSAGE_KEY_CHARS = 200;

/** How much of a message's first line a `messageQueued` event shows, in characters. */
export const QUEUED_MESSAGE_TEXT_CHARS = 120;

/** Messages larger than this are stored by reference; the workflow keeps their outline (about 200 bytes). */
export const INLINE_MESSAGE_BYTES = 4 * 1024;

/**
 * The workflow hands the transcript entries added since the run's previous model call (the new user
 * messages, the previous reply, tool results) to its worker's context cache when they add up to at
 * most this, as JSON: the model call then reads them there instead of querying the workflow (a billed
 * Action). The bound keeps what one workflow task copies out of the workflow's sandbox small; larger
 * tails are read by query. (Before patch `yiem-context-sink` the tail travelled in the model call's
 * input, so each of its bytes was recorded in history a second time.)
 */
export const MAX_CONTEXT_TAIL_BYTES = 16 * 1024;

/** At most this much of the transcript travels in one query result (a page). */
export const TRANSCRIPT_PAGE_BYTES = 512 * 1024;

/**
 * The model's context window when the worker sets none (`ModelSettings.maxContextBytes`, env
 * `YIEM_MAX_CONTEXT_BYTES`): about 250 000 tokens of text, more than most models take, far less
 * than a months-long transcript.
 */
export const DEFAULT_MAX_CONTEXT_BYTES = 1_000_000;

/**
 * Compactions a conversation keeps (and carries to its next run) for `Conversation.compactions()`;
 * older ones are dropped (the latest is the one model calls use). Each is a few kilobytes at most:
 * a larger summary is kept in the payload store.
 */
export const MAX_KEPT_COMPACTIONS = 20;

/** One message of the part a compaction summarises, as the compaction model reads it: cut to this many characters. */
export const COMPACTED_MESSAGE_CHARS = 2_000;

/** Estimated UTF-8 bytes per token, to turn a model's window in tokens (`maxContextTokens`) into bytes. */
export const BYTES_PER_TOKEN = 4;

// --- Tool calls (UTF-8 bytes of JSON) --------------------------------------------------------

/** Deepest nesting of arrays and objects accepted in tool arguments. */
export const MAX_ARGUMENT_DEPTH = 64;

/** Largest tool arguments accepted, as JSON in UTF-8 bytes: they travel in several Temporal payloads. */
export const MAX_ARGUMENT_BYTES = 256 * 1024;

/**
 * The default cap on a tool result's size (worker option `maxToolResultBytes`), and the cap on a
 * callback tool's result. Results no longer travel in history (large ones go to the payload store),
 * so the cap only guards the worker's memory and the model's context window against a runaway
 * tool: a 4 MB result is read whole, a 1 GB one is not.
 */
export const DEFAULT_MAX_TOOL_RESULT_BYTES = 4 * 1024 * 1024;

/**
 * The largest message a stdio MCP server may send (the SDK's default is 10 MB, below a result the
 * worker would cut to {@link DEFAULT_MAX_TOOL_RESULT_BYTES}). A 12 MB result must reach the cut, not
 * close the connection; a server that sends more than this is stopped, so it cannot exhaust the
 * worker's memory.
 */
export const MAX_MCP_STDIO_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * Largest progress report a tool may send, as JSON in UTF-8 bytes. Each one becomes an event
 * (carried by a signal or in the tool's result) and, the latest, the next heartbeat's details, so a
 * large one could push a payload past Temporal's limit and lose the tool's result.
 */
export const MAX_PROGRESS_BYTES = 32 * 1024;

/** Largest file or response body a sandboxed tool may read, so one call cannot flood the worker. */
export const MAX_SANDBOX_READ_BYTES = 5 * 1024 * 1024;

/** The most the chat's `readUserFile` callback tool returns to the model. */
export const MAX_USER_FILE_BYTES = 64 * 1024;

// --- Event log --------------------------------------------------------------------------------

/** At most this many of the latest events, and this many bytes of them, travel to the next run. */
export const MAX_CARRIED_EVENTS = 500;
export const MAX_CARRIED_EVENT_BYTES = 256 * 1024;

/** The log a run keeps in memory; older events are dropped at the end of a turn. */
export const MAX_EVENT_LOG_BYTES = 1024 * 1024;
/** The most events one `events` query answers with; a follower asks again from its `next`. */
export const MAX_EVENT_PAGE_ITEMS = 1_000;

/**
 * Streamed text is handed on as one `textDelta` event once this many characters are gathered, even
 * before its interval is up: a model that streams megabytes fast makes events of at most this size
 * (each within the payload limits), and their count stays the text's length over this.
 */
export const MAX_TEXT_DELTA_EVENT_CHARS = 64 * 1024;

/** Held-back events past this size (JSON bytes) go live at once, so the result stays far below 2 MB. */
export const MAX_HELD_BACK_EVENT_BYTES = 256 * 1024;

// --- Storage and caches (bytes) ---------------------------------------------------------------

/**
 * Payloads at least this large (after encoding and encryption) go to the payload store and history
 * keeps a reference. Well below Temporal's 2 MB limit, so that a turn's history stays a few kilobytes
 * even with 100 KB messages; small payloads stay inline, where the Web UI shows them.
 */
export const DEFAULT_PAYLOAD_THRESHOLD_BYTES = 32 * 1024;

/** Largest request body the codec server accepts. */
export const MAX_CODEC_REQUEST_BYTES = 16 * 1024 * 1024;

/**
 * How long a worker goes on trying to put a finished result (a tool's, a model's reply) into an
 * unreachable payload store before the call fails: long enough for a store's restart, since failing
 * sooner throws the result away and a retry would run the tool again.
 */
export const DEFAULT_PAYLOAD_STORE_RETRY_MS = 2 * 60_000;

/** Resolved stored messages a worker keeps in memory, across conversations. */
export const DEFAULT_MESSAGE_CACHE_BYTES = 32 * 1024 * 1024;

/** Transcript entries (outlines and small messages) a worker keeps, across conversations. */
export const DEFAULT_TRANSCRIPT_CACHE_BYTES = 16 * 1024 * 1024;

// --- Temporal's own limits ------------------------------------------------------------------

/**
 * The longest fairness key (UTF-8 bytes) the Temporal server takes on a scheduled activity; a longer
 * one fails the workflow task that schedules it, again and again (`fairness key length exceeds limit`).
 */
export const MAX_FAIRNESS_KEY_BYTES = 64;

// --- Texts shown in one line (characters, cut by `truncate`) -----------------------------------

/** A thrown non-Error value described as JSON, so a huge object cannot flood a tool result. */
export const THROWN_VALUE_CHARS = 2_000;

/** Refused tool arguments shown again to the model. */
export const SHOWN_ARGUMENT_CHARS = 500;

/** A refused conversation option quoted in the error. */
export const SHOWN_OPTION_CHARS = 80;

/** A `toolEnd` event's text: the result's first line; the full result is in the transcript. */
export const TOOL_END_TEXT_CHARS = 200;

/** A tool call's activity summary in the Temporal UI, e.g. `getWeather(city: "Tokyo")`. */
export const TOOL_CALL_SUMMARY_CHARS = 120;

/** A batch's activity summary in the Temporal UI: how many calls, their mode, then the calls. */
export const TOOL_BATCH_SUMMARY_CHARS = 400;

/** A sub-agent's child workflow summary in the Temporal UI (`sub-agent researcher: the task`). */
export const SUB_AGENT_SUMMARY_CHARS = 80;

/** The name of a timer row in the Web UI: a wait, or a tool call that never ran. */
export const TIMER_SUMMARY_CHARS = 160;

/** A conversation's default title in the Temporal UI (`agent · system prompt`). */
export const CONVERSATION_TITLE_CHARS = 80;

/** A tool result's first line in the CLI (`yiem history`, a worker's tool events in the chat). */
export const CLI_RESULT_LINE_CHARS = 160;

/** The longest name a decision may give its decider (`ApprovalDecision.decider`). */
export const MAX_DECIDER_CHARS = 200;

/** A chat endpoint request's body (`useChat` sends the whole chat each time): 10 MB. */
export const MAX_CHAT_REQUEST_BYTES = 10 * 1024 * 1024;

/** The console shows a conversation's latest this many messages: a page stays quick to open. */
export const CONSOLE_TRANSCRIPT_MESSAGES = 500;

/** Conversations the console lists at most, newest first. */
export const CONSOLE_LISTED_CONVERSATIONS = 200;

/** Largest console API request body (an approval's decision), in bytes. */
export const MAX_CONSOLE_REQUEST_BYTES = 64 * 1024;

/**
 * What a written tool's `console` may print in one call (on the worker's own console, on its main
 * thread): at most this many lines, at most this many a second, each cut to this many characters.
 * The rest is counted and told in one line when the call ends, so a tool that logs in a loop does
 * not stall the worker's other conversations.
 */
export const SANDBOX_CONSOLE_LINES_PER_CALL = 200;
export const SANDBOX_CONSOLE_LINES_PER_SECOND = 50;
export const SANDBOX_CONSOLE_LINE_CHARS = 2_000;
