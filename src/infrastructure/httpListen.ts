import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A server yiem started, listening: its origin (`http://host:port`, IPv6 in brackets) and how to stop it. */
export interface Listening {
  origin: string;
  /** Closes the server and every open connection (followers' streams would otherwise hold it open). */
  close(): Promise<void>;
}

/**
 * Starts `server` on `host:port` (port 0: any free one); rejects with the listen error (say
 * `EADDRINUSE`) instead of throwing it later. One home for the chat endpoint's, the console's and
 * the codec server's start and stop.
 */
export async function listen(server: Server, port: number, host: string): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    origin: `http://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
