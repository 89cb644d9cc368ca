import dgram from 'node:dgram';

/**
 * A DNS server on loopback that the test controls (UDP, the few bytes of RFC 1035 a resolver needs): a name
 * in `answers` gets its IPv4 address (and no IPv6 one), a name in `stalled` never gets an answer, any other
 * name is NXDOMAIN. Records every question it is asked.
 */
export async function startDnsServer(
  options: { answers?: Record<string, string>; stalled?: string[]; host?: string; port?: number } = {},
) {
  const answers = new Map(
    Object.entries(options.answers ?? {}).map(([name, ip]) => [name.toLowerCase(), ip]),
  );
  const stalled = new Set((options.stalled ?? []).map((name) => name.toLowerCase()));
  const questions: { name: string; type: number }[] = [];
  const socket = dgram.createSocket('udp4');
  socket.on('message', (query, from) => {
    // Header (12 bytes), then the question: labels, type, class.
    const labels: string[] = [];
    let at = 12;
    while (at < query.length && query[at] !== 0) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]).toString('latin1'));
      at += query[at] + 1;
    }
    const end = at + 5;
    if (end > query.length) return;
    const name = labels.join('.').toLowerCase();
    const type = query.readUInt16BE(at + 1);
    questions.push({ name, type });
    if (stalled.has(name)) return;
    const address = answers.get(name);
    const known = address !== undefined;
    const answer = known && type === 1;
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the id
    header.writeUInt16BE(0x8180 | (known ? 0 : 3), 2); // a response, recursion available; NXDOMAIN if unknown
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answer ? 1 : 0, 6);
    const parts = [header, query.subarray(12, end)];
    if (answer) {
      const record = Buffer.alloc(16);
      record.writeUInt16BE(0xc00c, 0); // the question's name
      record.writeUInt16BE(1, 2); // A
      record.writeUInt16BE(1, 4); // IN
      record.writeUInt32BE(1, 6); // TTL
      record.writeUInt16BE(4, 10);
      address.split('.').forEach((octet, i) => record.writeUInt8(Number(octet), 12 + i));
      parts.push(record);
    }
    socket.send(Buffer.concat(parts), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { address, port } = socket.address();
  return {
    /** `ip:port`, as dns.Resolver.setServers takes it. */
    server: `${address}:${port}`,
    questions,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
