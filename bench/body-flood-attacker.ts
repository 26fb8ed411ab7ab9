import net from 'node:net';

// The attacking side of `npm run bench -- body-flood`, in a process of its own:
// `node --import tsx bench/body-flood-attacker.ts <base url> <connections> <seconds>`; prints JSON.
// Each connection sends, without a token, a 48 MB JSON body (valid: 700,000 rows) to a custom-data
// replace as fast as the server takes it, reads the answer, and starts again on a new connection.
const [base, connections, seconds] = process.argv.slice(2) as [string, string, string];
const url = new URL('/core/custom-data/tables/orders/replace', base);
const row = '{"id":"00000000","name":"a row of a custom table","amount":"12.50"},';
const rows = Math.floor((48 * 1024 * 1024 - 20) / row.length);
const body = Buffer.from(`{"rows":[${row.repeat(rows)}{"id":"x"}]}`);
const head = Buffer.from(
  `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
);

const until = Date.now() + Number(seconds) * 1000;
const statuses: Record<string, number> = {};
let bytesSent = 0;
const answerMs: number[] = [];

/** One request on a fresh connection: resolves when the server answered (or dropped it). */
function attack(): Promise<void> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(Number(url.port), url.hostname);
    let answered = false;
    socket.on('connect', () => {
      socket.write(head);
      // The body in 1 MiB pieces, as fast as the socket drains.
      let offset = 0;
      const pump = () => {
        while (offset < body.length && !socket.destroyed) {
          const piece = body.subarray(offset, offset + 1024 * 1024);
          offset += piece.length;
          bytesSent += piece.length;
          if (!socket.write(piece)) return void socket.once('drain', pump);
        }
      };
      pump();
    });
    socket.on('data', (chunk) => {
      if (answered) return;
      answered = true;
      const status = /^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 'other';
      statuses[status] = (statuses[status] ?? 0) + 1;
      answerMs.push(Date.now() - started);
      socket.destroy();
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      if (!answered) statuses.dropped = (statuses.dropped ?? 0) + 1;
      resolve();
    });
  });
}

await Promise.all(
  Array.from({ length: Number(connections) }, async () => {
    while (Date.now() < until) await attack();
  }),
);
answerMs.sort((a, b) => a - b);
process.stdout.write(
  JSON.stringify({
    requests: answerMs.length,
    statuses,
    megabytesSent: Math.round(bytesSent / 1024 / 1024),
    answerP50Ms: answerMs[Math.floor(answerMs.length / 2)] ?? null,
  }),
);
