import { createHook } from 'node:async_hooks';
import dc from 'node:diagnostics_channel';

// Preloaded into the API process by `REQUEST_COST_PROMISES=1 npm run bench -- request-cost`: counts the
// promises made per request served (async hooks see every one; the HTTP server's diagnostics channel
// counts the requests) and writes the figure to stderr every 3 s of load. A promise costs more than its
// allocation on Node 20: with the request scope's AsyncLocalStorage on, async hooks run for each one.
let requests = 0;
let promises = 0;
dc.subscribe('http.server.request.start', () => {
  requests++;
});
createHook({
  init(_id, type) {
    if (type === 'PROMISE') promises++;
  },
}).enable();
setInterval(() => {
  if (requests < 1000) return;
  process.stderr.write(`[promises] ${(promises / requests).toFixed(1)} per request over ${requests} requests\n`);
  requests = 0;
  promises = 0;
}, 3000).unref();
