import type Router from '@koa/router';

type Layer = Router['stack'][number];
type Match = ReturnType<Router['match']>;

/** Layers tested for every path: a first segment that is not literal text, a prefix (middleware) layer. */
const ANY = '\0any';
const NOT_LITERAL = /[:*?+(){}[\]\\]/;

/** The first segment of a layer's path when it is literal text every path it matches starts with. */
function layerKey(layer: Layer): string {
  if (typeof layer.path !== 'string' || layer.methods.length === 0 || layer.opts.end === false) return ANY;
  if (layer.opts.prefix) return ANY;
  const segment = layer.path.startsWith('/') ? layer.path.split('/')[1]! : '';
  return segment === '' || NOT_LITERAL.test(segment) ? ANY : segment.toLowerCase();
}

/** A request path's first segment, as layerKey reads a layer's (case folded: matching ignores case by default). */
const pathKey = (path: string): string => {
  if (path.charCodeAt(0) !== 47 /* / */) return ANY;
  const end = path.indexOf('/', 1);
  return (end < 0 ? path.slice(1) : path.slice(1, end)).toLowerCase();
};

/**
 * Makes `router.match` test only the layers that can match a path: those whose path starts with the
 * request path's first segment, plus any whose first segment is not literal. @koa/router tests every
 * layer's regular expression in turn, and a request is matched twice (the 405 check, then dispatch), so
 * with a few hundred routes the scan cost more than the rest of routing. Each candidate list keeps the
 * stack's order and every candidate is still tested by its own expression, so a match is the same as
 * the full scan's (test/unit/route-index.test.ts). The index follows routes added later (it is rebuilt
 * when the stack grows). A match is kept for one more call with the same path and method.
 */
export function indexRoutes(router: Router): void {
  let indexedLength = -1;
  let byKey = new Map<string, Layer[]>();
  let anyOnly: Layer[] = [];
  // A request is matched twice in a row (the 405 check, then dispatch) with the same path and method: the
  // first match is kept for the second call only, so the array handed to the router as ctx.matched is its own.
  let last: { path: string; method: string; result: Match } | undefined;

  const rebuild = () => {
    const keys = new Set(router.stack.map(layerKey));
    keys.delete(ANY);
    byKey = new Map([...keys].map((key) => [key, router.stack.filter((layer) => [key, ANY].includes(layerKey(layer)))]));
    anyOnly = router.stack.filter((layer) => layerKey(layer) === ANY);
    indexedLength = router.stack.length;
    last = undefined;
  };

  router.match = (path: string, method: string): Match => {
    if (router.stack.length !== indexedLength) rebuild();
    const kept = last;
    last = undefined;
    if (kept && kept.path === path && kept.method === method) return kept.result;
    const candidates = byKey.get(pathKey(path)) ?? anyOnly;
    // The same loop as Router.prototype.match, over the candidates only.
    const result: Match = { path: [], pathAndMethod: [], route: false };
    const normalizedMethod = method.toUpperCase();
    for (const layer of candidates) {
      if (!layer.match(path)) continue;
      result.path.push(layer);
      const isMiddleware = layer.methods.length === 0;
      if (isMiddleware || layer.methods.includes(normalizedMethod)) {
        result.pathAndMethod.push(layer);
        if (!isMiddleware) result.route = true;
      }
    }
    last = { path, method, result };
    return result;
  };
}
