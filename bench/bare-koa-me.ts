import Koa from 'koa';

// The floor of `npm run bench -- request-cost`, in a process of its own: a bare Koa app answering every
// request with the JSON body the service's GET /me gave (REQUEST_COST_BODY), no middleware, no router.
// `node --import tsx bench/bare-koa-me.ts`; prints the port it listens on.
const body = JSON.parse(process.env.REQUEST_COST_BODY ?? '{}') as unknown;
const app = new Koa();
app.use((ctx) => {
  ctx.body = body;
});
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
