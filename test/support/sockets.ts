import net from 'node:net';

/**
 * Whether a new connection to `url`'s port is refused now (the service has closed its listening socket, as it
 * does first when shutting down). A connection that is accepted is closed again at once.
 */
export function refusesConnections(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNREFUSED' ? resolve(true) : reject(error),
    );
  });
}
