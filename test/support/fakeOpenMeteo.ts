import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local stand-in for Open-Meteo's geocoding and forecast APIs that knows one city, Tokyo. */
export async function startFakeOpenMeteo(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const body = url.pathname.endsWith('/search')
      ? url.searchParams.get('name') === 'Tokyo'
        ? { results: [{ name: 'Tokyo', country: 'Japan', latitude: 35.69, longitude: 139.69 }] }
        : {}
      : {
          current: {
            time: '2026-11-30T20:00',
            temperature_2m: 12.5,
            relative_humidity_2m: 55,
            wind_speed_10m: 8.1,
            weather_code: 0,
          },
        };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
