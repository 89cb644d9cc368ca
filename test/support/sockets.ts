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
    // ECONNRESET while connecting: the connection sat in the listen backlog when the server closed its listening
    // socket, and the kernel reset it. The server refuses new connections either way.
    socket.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNREFUSED' || error.code === 'ECONNRESET' ? resolve(true) : reject(error),
    );
  });
}
