import type { AgentTool, AgentToolResult, OnPartialResult, ToolArguments, ToolLoadContext } from 'yiem-agent';
import { ToolError, textResult } from 'yiem-agent';

const DEFAULT_GEOCODING_URL = 'https://geocoding-api.open-meteo.com';
const DEFAULT_FORECAST_URL = 'https://api.open-meteo.com';

type TemperatureUnit = 'celsius' | 'fahrenheit';

interface Place {
  /** e.g. `Tokyo, Japan` */
  label: string;
  latitude: number;
  longitude: number;
}

interface CurrentWeather {
  time: string;
  temperature_2m: number;
  relative_humidity_2m: number;
  wind_speed_10m: number;
  weather_code: number;
}

/** WMO weather interpretation codes, as Open-Meteo documents them. */
const WEATHER_CODES: Record<number, string> = {
  0: 'Clear sky',
  1: 'Mainly clear',
  2: 'Partly cloudy',
  3: 'Overcast',
  45: 'Fog',
  48: 'Depositing rime fog',
  51: 'Light drizzle',
  53: 'Moderate drizzle',
  55: 'Dense drizzle',
  56: 'Light freezing drizzle',
  57: 'Dense freezing drizzle',
  61: 'Slight rain',
  63: 'Moderate rain',
  65: 'Heavy rain',
  66: 'Light freezing rain',
  67: 'Heavy freezing rain',
  71: 'Slight snowfall',
  73: 'Moderate snowfall',
  75: 'Heavy snowfall',
  77: 'Snow grains',
  80: 'Slight rain showers',
  81: 'Moderate rain showers',
  82: 'Violent rain showers',
  85: 'Slight snow showers',
  86: 'Heavy snow showers',
  95: 'Thunderstorm',
  96: 'Thunderstorm with slight hail',
  99: 'Thunderstorm with heavy hail',
};

function describeWeatherCode(code: number): string {
  return WEATHER_CODES[code] ?? `Unknown conditions (WMO code ${code})`;
}

/**
 * An Open-Meteo endpoint under the base URL from `envName`. Read at call time rather than load time,
 * so tests and deployments can point at another server, including one under a path prefix.
 */
function endpoint(envName: string, fallback: string, path: string): URL {
  const base = process.env[envName] || fallback;
  return new URL(path, base.endsWith('/') ? base : `${base}/`);
}

/** The reason Open-Meteo gives in an error body (`{"error": true, "reason": "..."}`), if any. */
async function failureReason(response: Response): Promise<string> {
  try {
    const body: unknown = await response.json();
    if (typeof body === 'object' && body !== null && 'reason' in body) return `: ${String(body.reason)}`;
  } catch {
    // Not JSON: the status alone has to do.
  }
  return '';
}

/**
 * fetch says only "fetch failed"; undici keeps what happened in `cause`, e.g. `getaddrinfo ENOTFOUND
 * geocoding-api.open-meteo.com` or an `ECONNREFUSED` with no message. The error names the host and
 * that cause, and keeps the cause, so a caller can tell an unreachable service (a `code`) apart.
 */
function unreachable(url: URL, service: string, error: unknown): Error {
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  let detail = cause instanceof Error ? cause.message : String(cause);
  const code = cause instanceof Error && 'code' in cause && typeof cause.code === 'string' ? cause.code : '';
  if (code && !detail.includes(code)) detail = detail ? `${detail} (${code})` : code;
  return new Error(`${service} at ${url.host} could not be reached: ${detail}`, { cause });
}

async function fetchJson(url: URL, service: string, signal: AbortSignal | undefined): Promise<unknown> {
  const response = await fetch(url, { signal }).catch((error: unknown) => {
    throw signal?.aborted ? error : unreachable(url, service, error);
  });
  if (response.ok) return response.json();
  const failure = `${service} answered HTTP ${response.status}${await failureReason(response)}`;
  // Rate limits and timeouts pass with time, so they are retried like server errors; any other 4xx
  // means the request itself is wrong and retrying cannot help.
  const isClientError = response.status >= 400 && response.status < 500;
  if (isClientError && response.status !== 408 && response.status !== 429) throw new ToolError(failure);
  throw new Error(failure);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** "Tokyo, Japan"; the region is kept only when it adds something, e.g. "Springfield, Illinois, United States". */
function placeLabel(result: Record<string, unknown>): string {
  const name = String(result.name);
  const region = typeof result.admin1 === 'string' && result.admin1 !== name ? result.admin1 : undefined;
  const country = typeof result.country === 'string' ? result.country : undefined;
  return [name, region, country].filter((part) => part !== undefined).join(', ');
}

async function findPlace(city: string, signal: AbortSignal | undefined): Promise<Place> {
  const url = endpoint('YIEM_OPEN_METEO_GEOCODING_URL', DEFAULT_GEOCODING_URL, 'v1/search');
  url.search = new URLSearchParams({ name: city, count: '1', language: 'en', format: 'json' }).toString();
  const body = await fetchJson(url, 'Open-Meteo geocoding', signal);
  // Open-Meteo omits `results` altogether when nothing matches.
  const first = isRecord(body) && Array.isArray(body.results) ? body.results[0] : undefined;
  if (!isRecord(first)) {
    throw new ToolError(
      `No place called '${city}' was found. Check the spelling, or give the city name alone without region or country.`,
    );
  }
  return { label: placeLabel(first), latitude: Number(first.latitude), longitude: Number(first.longitude) };
}

function isCurrentWeather(value: unknown): value is CurrentWeather {
  return (
    isRecord(value) &&
    typeof value.time === 'string' &&
    typeof value.temperature_2m === 'number' &&
    typeof value.relative_humidity_2m === 'number' &&
    typeof value.wind_speed_10m === 'number' &&
    typeof value.weather_code === 'number'
  );
}

async function fetchCurrentWeather(
  place: Place,
  units: TemperatureUnit,
  signal: AbortSignal | undefined,
): Promise<CurrentWeather> {
  const url = endpoint('YIEM_OPEN_METEO_FORECAST_URL', DEFAULT_FORECAST_URL, 'v1/forecast');
  const query = new URLSearchParams({
    latitude: String(place.latitude),
    longitude: String(place.longitude),
    current: 'temperature_2m,relative_humidity_2m,wind_speed_10m,weather_code',
    timezone: 'auto',
  });
  if (units === 'fahrenheit') query.set('temperature_unit', 'fahrenheit');
  url.search = query.toString();
  const body = await fetchJson(url, 'Open-Meteo forecast', signal);
  const current = isRecord(body) ? body.current : undefined;
  // A reply without current values is the service misbehaving, not the request being wrong: retry.
  if (!isCurrentWeather(current)) throw new Error('Open-Meteo forecast returned no current weather');
  return current;
}

async function execute(
  _toolCallId: string,
  args: ToolArguments,
  signal: AbortSignal | undefined,
  onPartialResult: OnPartialResult,
): Promise<AgentToolResult> {
  const city = String(args.city);
  const units: TemperatureUnit = args.units === 'fahrenheit' ? 'fahrenheit' : 'celsius';

  onPartialResult({ status: `Geocoding ${city}…` });
  const place = await findPlace(city, signal);
  onPartialResult({ status: 'Fetching forecast…' });
  const current = await fetchCurrentWeather(place, units, signal);

  const temperatureUnit = units === 'fahrenheit' ? '°F' : '°C';
  const conditions = describeWeatherCode(current.weather_code);
  const text =
    `Weather in ${place.label}: ${conditions}, ${current.temperature_2m}${temperatureUnit}, ` +
    `humidity ${current.relative_humidity_2m}%, wind ${current.wind_speed_10m} km/h`;
  return textResult(text, {
    place: place.label,
    latitude: place.latitude,
    longitude: place.longitude,
    observedAt: current.time,
    conditions,
    weatherCode: current.weather_code,
    temperature: current.temperature_2m,
    temperatureUnit,
    humidityPercent: current.relative_humidity_2m,
    windSpeedKmh: current.wind_speed_10m,
  });
}

export function getTool(_context: ToolLoadContext): AgentTool {
  return {
    name: 'getWeather',
    label: 'Weather Lookup',
    description:
      'Get the current weather for a city: conditions (e.g. clear sky, light rain), temperature, relative ' +
      'humidity and wind speed in km/h, from Open-Meteo. Pass the city name alone (e.g. "Tokyo"); the best ' +
      'match worldwide is used and named in the result. Current conditions only, no forecast.',
    inputSchema: {
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City name, e.g. "Tokyo" or "New York"' },
        units: {
          type: 'string',
          enum: ['celsius', 'fahrenheit'],
          default: 'celsius',
          description: 'Temperature unit',
        },
      },
      required: ['city'],
    },
    execute,
    parallelToolExecute: true,
    policy: { startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 3 } },
  };
}
