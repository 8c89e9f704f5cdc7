import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** A TCP proxy standing in for a load balancer: each connection goes to the first backend that accepts it. */
export interface TcpProxy {
  address: string;
  close(): Promise<void>;
}

const HOST = '127.0.0.1';

/** Listens on `port` (0: any free one) and forwards every connection to the first of `backends` that answers. */
export async function startTcpProxy(port: number, backends: readonly number[]): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const server: Server = createServer((client) => {
    track(client);
    client.pause();
    const tryBackend = (index: number): void => {
      const backendPort = backends[index];
      if (backendPort === undefined) {
        client.destroy();
        return;
      }
      const upstream = createConnection({ host: HOST, port: backendPort });
      let connected = false;
      upstream.on('error', () => {
        if (connected) client.destroy();
        else tryBackend(index + 1);
      });
      upstream.once('connect', () => {
        connected = true;
        track(upstream);
        client.on('error', () => upstream.destroy());
        upstream.once('close', () => client.destroy());
        client.once('close', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    tryBackend(0);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST, resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP address');
  return {
    address: `${HOST}:${address.port}`,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
