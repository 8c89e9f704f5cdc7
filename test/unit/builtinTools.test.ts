import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resultText, ToolError } from '../../src/contract/toolResult.ts';
import type { ToolArguments } from '../../src/contract/types/base.ts';
import type {
  AgentTool,
  AgentToolResult,
  ToolInfo,
  ToolLoadContext,
} from '../../src/contract/types/tools.ts';
import * as getTimeModule from '../../tools/getTime.ts';
import * as getWeatherModule from '../../tools/getWeather.ts';
import * as listToolsModule from '../../tools/listTools.ts';

const emptyContext: ToolLoadContext = { listTools: () => [] };

function validate(tool: AgentTool, args: ToolArguments): string | null | undefined {
  if (!tool.validateRequiredArgs) throw new Error(`${tool.name} has no custom validation`);
  const problem = tool.validateRequiredArgs(args);
  if (problem instanceof Promise) throw new Error(`${tool.name} validates asynchronously`);
  return problem;
}

async function run(tool: AgentTool, args: ToolArguments, partials: unknown[] = []): Promise<AgentToolResult> {
  if (!tool.execute) throw new Error(`${tool.name} runs in the workflow, not in a tool activity`);
  return tool.execute('call_1', args, undefined, (partial) => partials.push(partial));
}

/** UTC offset in minutes of `timeZone` now, from wall-clock readings rather than `longOffset` names. */
function offsetMinutesNow(timeZone: string): number {
  const now = new Date();
  now.setUTCSeconds(0, 0);
  const wallClock = (zone: string) => Date.parse(`${now.toLocaleString('en-US', { timeZone: zone })} UTC`);
  return (wallClock(timeZone) - wallClock('UTC')) / 60_000;
}

function offsetMinutes(utcOffset: string): number {
  const match = /^([+-])(\d\d):(\d\d)$/.exec(utcOffset);
  if (!match) throw new Error(`not an offset: ${utcOffset}`);
  const minutes = Number(match[2]) * 60 + Number(match[3]);
  return match[1] === '-' ? -minutes : minutes;
}

describe('getTime', () => {
  const tool = getTimeModule.getTool(emptyContext);

  it('rejects a call with neither timezone nor city', () => {
    const missing = "Missing required argument: provide at least one of 'timezone' or 'city'";
    expect(validate(tool, {})).toBe(missing);
    expect(validate(tool, { city: '  ' })).toBe(missing);
  });

  it('rejects a timezone that is not in IANA format', () => {
    expect(validate(tool, { timezone: 'Tokyo' })).toBe(
      "Invalid timezone format: 'Tokyo'. Use IANA format, e.g. 'America/New_York'",
    );
    expect(validate(tool, { timezone: 'UTC+9' })).toMatch(/^Invalid timezone format: 'UTC\+9'/);
  });

  it('accepts real zones whose names contain underscores or hyphens', () => {
    expect(validate(tool, { timezone: 'America/New_York' })).toBeNull();
    expect(validate(tool, { timezone: 'America/Port-au-Prince' })).toBeNull();
    expect(validate(tool, { timezone: 'America/Argentina/Buenos_Aires' })).toBeNull();
    expect(validate(tool, { timezone: 'Asia/Kolkata' })).toBeNull();
  });

  it('rejects a well-formed zone that does not exist, naming it', () => {
    const error = validate(tool, { timezone: 'Mars/Olympus' });
    expect(error).toContain("'Mars/Olympus'");
    expect(error).not.toMatch(/format/);
  });

  it('accepts a city an IANA zone is named after, and rejects one that is not', () => {
    expect(validate(tool, { city: 'Tokyo' })).toBeNull();
    expect(validate(tool, { city: 'new york' })).toBeNull();
    const error = validate(tool, { city: 'Atlantis' });
    expect(error).toContain("'Atlantis'");
    expect(error).toContain("pass 'timezone'");
  });

  it('reports the time of a city in the zone it resolves to', async () => {
    const tokyo = await run(tool, { city: 'Tokyo' });
    expect(resultText(tokyo.content)).toMatch(
      /^Current time in Asia\/Tokyo: \w+, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(UTC\+09:00\)$/,
    );
    expect(tokyo.details).toMatchObject({ timezone: 'Asia/Tokyo', utcOffset: '+09:00' });

    const newYork = await run(tool, { city: 'new york' });
    expect(newYork.details.timezone).toBe('America/New_York');
  });

  it('gives the zone offset Intl gives, and a local time that is now', async () => {
    for (const timezone of ['America/New_York', 'Asia/Kolkata', 'Etc/UTC', 'America/St_Johns']) {
      const before = Date.now();
      const result = await run(tool, { timezone });
      const { iso, utcOffset } = result.details as { iso: string; utcOffset: string };
      expect(offsetMinutes(utcOffset), timezone).toBe(offsetMinutesNow(timezone));
      expect(resultText(result.content)).toContain(`(UTC${utcOffset})`);
      // The ISO string carries the offset, so it parses back to the instant it was taken at.
      expect(Date.parse(iso)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
      expect(Date.parse(iso)).toBeLessThanOrEqual(Date.now());
    }
  });

  it('prefers timezone over city when both are given', async () => {
    const result = await run(tool, { timezone: 'Europe/Paris', city: 'Tokyo' });
    expect(result.details.timezone).toBe('Europe/Paris');
  });
});

describe('getWeather', () => {
  interface FakeReply {
    status: number;
    body: unknown;
  }
  type FakeOpenMeteo = (url: URL) => FakeReply;

  const tokyo = { name: 'Tokyo', latitude: 35.6895, longitude: 139.69171, country: 'Japan', admin1: 'Tokyo' };
  const clearAndMild = {
    time: '2026-11-30T20:00',
    temperature_2m: 22.1,
    relative_humidity_2m: 40,
    wind_speed_10m: 5.2,
    weather_code: 0,
  };
  const healthyOpenMeteo: FakeOpenMeteo = (url) =>
    url.pathname === '/v1/search'
      ? { status: 200, body: url.searchParams.get('name') === 'Tokyo' ? { results: [tokyo] } : {} }
      : { status: 200, body: { current: clearAndMild } };

  let server: Server;
  let requests: URL[];
  let openMeteo: FakeOpenMeteo;
  const savedEnv = {
    geocoding: process.env.YIEM_OPEN_METEO_GEOCODING_URL,
    forecast: process.env.YIEM_OPEN_METEO_FORECAST_URL,
  };
  const tool = getWeatherModule.getTool(emptyContext);

  beforeAll(async () => {
    server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      requests.push(url);
      const { status, body } = openMeteo(url);
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    process.env.YIEM_OPEN_METEO_GEOCODING_URL = origin;
    process.env.YIEM_OPEN_METEO_FORECAST_URL = origin;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    for (const [name, value] of [
      ['YIEM_OPEN_METEO_GEOCODING_URL', savedEnv.geocoding],
      ['YIEM_OPEN_METEO_FORECAST_URL', savedEnv.forecast],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  beforeEach(() => {
    requests = [];
    openMeteo = healthyOpenMeteo;
  });

  it('reports the current weather of the place it finds', async () => {
    const partials: unknown[] = [];
    const result = await run(tool, { city: 'Tokyo', units: 'celsius' }, partials);

    expect(resultText(result.content)).toBe(
      'Weather in Tokyo, Japan: Clear sky, 22.1°C, humidity 40%, wind 5.2 km/h',
    );
    expect(result.details).toMatchObject({
      place: 'Tokyo, Japan',
      latitude: 35.6895,
      longitude: 139.69171,
      temperature: 22.1,
      temperatureUnit: '°C',
      humidityPercent: 40,
      windSpeedKmh: 5.2,
    });
    expect(partials).toEqual([{ status: 'Geocoding Tokyo…' }, { status: 'Fetching forecast…' }]);

    const [geocoding, forecast] = requests;
    expect(geocoding?.searchParams.get('name')).toBe('Tokyo');
    expect(forecast?.pathname).toBe('/v1/forecast');
    expect(forecast?.searchParams.get('latitude')).toBe('35.6895');
    expect(forecast?.searchParams.get('longitude')).toBe('139.69171');
    expect(forecast?.searchParams.get('temperature_unit')).toBeNull();
  });

  it('asks Open-Meteo for Fahrenheit when told to, and labels the temperature so', async () => {
    const result = await run(tool, { city: 'Tokyo', units: 'fahrenheit' });
    expect(requests[1]?.searchParams.get('temperature_unit')).toBe('fahrenheit');
    expect(resultText(result.content)).toContain('22.1°F');
  });

  it('names the weather of a non-zero WMO code', async () => {
    openMeteo = (url) =>
      url.pathname === '/v1/search'
        ? healthyOpenMeteo(url)
        : { status: 200, body: { current: { ...clearAndMild, weather_code: 63 } } };
    const result = await run(tool, { city: 'Tokyo' });
    expect(resultText(result.content)).toContain(': Moderate rain, ');
  });

  it('fails for the model at once when no place has that name', async () => {
    const failure = run(tool, { city: 'Atlantis' });
    await expect(failure).rejects.toBeInstanceOf(ToolError);
    await expect(failure).rejects.toThrow("No place called 'Atlantis' was found");
    expect(requests).toHaveLength(1);
  });

  it('fails for the model at once when Open-Meteo refuses the request', async () => {
    openMeteo = (url) =>
      url.pathname === '/v1/search'
        ? healthyOpenMeteo(url)
        : { status: 400, body: { error: true, reason: 'Latitude must be in range of -90 to 90°.' } };
    const failure = run(tool, { city: 'Tokyo' });
    await expect(failure).rejects.toBeInstanceOf(ToolError);
    await expect(failure).rejects.toThrow(/HTTP 400: Latitude must be in range/);
  });

  it('throws a retryable error when Open-Meteo fails on its side', async () => {
    openMeteo = () => ({ status: 500, body: { error: true, reason: 'Internal error' } });
    const error = await run(tool, { city: 'Tokyo' }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ToolError);
    expect(String(error)).toContain('HTTP 500');
  });

  // `.invalid` never resolves (RFC 6761): what every host is to a machine without DNS.
  it('names the host and the cause when Open-Meteo cannot be reached, and is retried', async () => {
    process.env.YIEM_OPEN_METEO_GEOCODING_URL = 'http://geocoding-api.open-meteo.invalid';
    try {
      const error = await run(tool, { city: 'Tokyo' }).catch((thrown: unknown) => thrown);
      expect(error).not.toBeInstanceOf(ToolError);
      expect(String(error)).toMatch(
        /^Error: Open-Meteo geocoding at geocoding-api\.open-meteo\.invalid could not be reached: .*ENOTFOUND geocoding-api\.open-meteo\.invalid/,
      );
    } finally {
      process.env.YIEM_OPEN_METEO_GEOCODING_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    }
  });

  it('names the address and ECONNREFUSED when nothing listens there', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    process.env.YIEM_OPEN_METEO_FORECAST_URL = `http://127.0.0.1:${port}`;
    try {
      const error = await run(tool, { city: 'Tokyo' }).catch((thrown: unknown) => thrown);
      expect(String(error)).toContain(`Open-Meteo forecast at 127.0.0.1:${port} could not be reached: `);
      expect(String(error)).toContain('ECONNREFUSED');
    } finally {
      process.env.YIEM_OPEN_METEO_FORECAST_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    }
  });

  it('treats a rate limit as retryable', async () => {
    openMeteo = () => ({ status: 429, body: { error: true, reason: 'Too many requests' } });
    const error = await run(tool, { city: 'Tokyo' }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ToolError);
  });
});

describe('listTools', () => {
  it('lists the tools registered when it runs, including ones added after it was loaded', async () => {
    const registry: ToolInfo[] = [
      { name: 'getWeather', label: 'Weather Lookup', description: 'Fetch current weather for a city.' },
    ];
    const tool = listToolsModule.getTool({ listTools: () => [...registry] });
    registry.push(
      { name: 'listTools', label: tool.label, description: tool.description },
      { name: 'searchWine', label: 'Wine Search', description: 'Search a wine database\nby name.' },
    );

    const result = await run(tool, {});

    expect(resultText(result.content)).toBe(
      [
        'Available tools:',
        '- getWeather: Weather Lookup — Fetch current weather for a city.',
        `- listTools: List Tools — ${tool.description}`,
        '- searchWine: Wine Search — Search a wine database by name.',
      ].join('\n'),
    );
    expect(result.details.tools).toEqual([
      registry[0],
      registry[1],
      { name: 'searchWine', label: 'Wine Search', description: 'Search a wine database\nby name.' },
    ]);
  });
});
