import type { AgentTool, AgentToolResult, ToolArguments, ToolLoadContext } from 'yiem-agent';
import { ToolError, textResult } from 'yiem-agent';

const MISSING_ARGUMENT = "Missing required argument: provide at least one of 'timezone' or 'city'";

/**
 * The seed's IANA format check, widened: its `[A-Za-z]+` segments reject zones that really exist and
 * that models ask for all the time, such as America/New_York (underscore) and America/Port-au-Prince
 * (hyphen).
 */
const IANA_ZONE_FORMAT = /^[A-Za-z]+\/[A-Za-z_-]+(\/[A-Za-z_-]+)*$/;

interface ZonedTime {
  /** e.g. `Monday, 2026-11-30 20:03:12` */
  wallClock: string;
  /** Local time with its offset, e.g. `2026-11-30T20:03:12+09:00` */
  iso: string;
  /** e.g. `+09:00` */
  utcOffset: string;
}

/** Whether the runtime's time zone database knows the zone. */
function isKnownTimeZone(zone: string): boolean {
  // Not `Intl.supportedValuesOf('timeZone')`: it lists only ICU's canonical names, so it lacks
  // current names such as Asia/Kolkata and Europe/Kyiv that Intl nevertheless accepts.
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Lower case, with underscores and runs of spaces as one space, so "new york" meets "New_York". */
function normalisePlaceName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[_\s]+/g, ' ')
    .trim();
}

/**
 * The IANA zone named after a city ("Tokyo" → Asia/Tokyo, "new york" → America/New_York), if any.
 * Anything after a comma is ignored, so "Tokyo, Japan" resolves too.
 */
function timeZoneForCity(city: string): string | undefined {
  const wanted = normalisePlaceName(city.split(',')[0] ?? '');
  return Intl.supportedValuesOf('timeZone').find(
    (zone) => normalisePlaceName(zone.slice(zone.lastIndexOf('/') + 1)) === wanted,
  );
}

function requestedCity(args: ToolArguments): string {
  return typeof args.city === 'string' ? args.city.trim() : '';
}

/** The seed's custom validation, plus checks that the zone exists and that the city resolves. */
function validateRequiredArgs(args: ToolArguments): string | null {
  const city = requestedCity(args);
  if (args.timezone === undefined || args.timezone === null) {
    if (city === '') return MISSING_ARGUMENT;
    if (timeZoneForCity(city) === undefined) {
      return `Unknown city: '${city}'. No IANA time zone is named after it; pass 'timezone' instead, e.g. 'America/Los_Angeles' for San Francisco`;
    }
    return null;
  }
  const timezone = String(args.timezone);
  if (!IANA_ZONE_FORMAT.test(timezone)) {
    return `Invalid timezone format: '${timezone}'. Use IANA format, e.g. 'America/New_York'`;
  }
  if (!isKnownTimeZone(timezone)) {
    return `Unknown timezone: '${timezone}' is not in the IANA time zone database. Use an existing zone, e.g. 'Europe/Paris'`;
  }
  return null;
}

/** The time zone to report: `timezone` when given, else the one the city resolves to. */
function targetTimeZone(args: ToolArguments): string {
  if (typeof args.timezone === 'string') return args.timezone;
  const city = requestedCity(args);
  const zone = timeZoneForCity(city);
  if (zone === undefined) throw new ToolError(`Unknown city: '${city}'. Pass 'timezone' instead.`);
  return zone;
}

function timeIn(zone: string, instant: Date): ZonedTime {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    weekday: 'long',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'longOffset',
  }).formatToParts(instant);
  const part = (type: Intl.DateTimeFormatPartTypes): string =>
    parts.find((candidate) => candidate.type === type)?.value ?? '';
  // `longOffset` renders as "GMT+09:00", or as a bare "GMT" at zero offset in some ICU versions.
  const utcOffset = part('timeZoneName').replace('GMT', '') || '+00:00';
  const date = `${part('year')}-${part('month')}-${part('day')}`;
  const time = `${part('hour')}:${part('minute')}:${part('second')}`;
  return { wallClock: `${part('weekday')}, ${date} ${time}`, iso: `${date}T${time}${utcOffset}`, utcOffset };
}

function execute(_toolCallId: string, args: ToolArguments): AgentToolResult {
  const timezone = targetTimeZone(args);
  const { wallClock, iso, utcOffset } = timeIn(timezone, new Date());
  return textResult(`Current time in ${timezone}: ${wallClock} (UTC${utcOffset})`, {
    timezone,
    iso,
    utcOffset,
  });
}

export function getTool(_context: ToolLoadContext): AgentTool {
  return {
    name: 'getTime',
    label: 'Time Lookup',
    description:
      "Get the current local date, time, weekday and UTC offset in a time zone. Pass 'timezone' as an IANA " +
      "zone name (e.g. 'America/New_York', 'Asia/Tokyo'), or 'city' for a city an IANA zone is named after " +
      "(e.g. 'Tokyo', 'London', 'New York'). For other cities pass the city's IANA zone as 'timezone'. " +
      "When both are given, 'timezone' is used.",
    inputSchema: {
      type: 'object',
      properties: {
        timezone: { type: 'string', description: "IANA time zone name, e.g. 'Europe/Paris'" },
        city: { type: 'string', description: "City an IANA zone is named after, e.g. 'Tokyo'" },
      },
    },
    execute,
    validateRequiredArgs,
    parallelToolExecute: true,
    // In memory and under a millisecond, with nothing to heartbeat: a local activity (docs/tools.md).
    localActivity: true,
  };
}
