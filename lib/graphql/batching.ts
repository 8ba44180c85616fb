/**
 * One DataLoader per request: everything a request asks for in the same tick — the representations
 * of one `_entities` call, a field of every item of a list — is loaded in one batch (one SQL query),
 * and nothing is cached beyond the request. The request is known by its context's `httpRequest`
 * (context.ts), which the operations of a batched HTTP request share (gateway/subgraph-batching.ts):
 * they run side by side, so one batch answers all of them.
 */
import DataLoader from 'dataloader';
import type { RequestContext } from './context.js';

export function perRequest<K, V, C = K>(batch: DataLoader.BatchLoadFn<K, V>, options?: DataLoader.Options<K, V, C>): (context: unknown) => DataLoader<K, V, C> {
  const loaders = new WeakMap<object, DataLoader<K, V, C>>();
  return (context) => {
    const key = (context as Partial<RequestContext>).httpRequest ?? (context as object);
    let loader = loaders.get(key);
    if (!loader) {
      loader = new DataLoader(batch, options);
      loaders.set(key, loader);
    }
    return loader;
  };
}
