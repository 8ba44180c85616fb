/** What the live subscription tests share: a subscription's deliveries as they come. */

/**
 * The items one subscription delivers under `field` (those `keep` takes), its errors, the sink to
 * give the graphql-ws or graphql-sse client, and a wait for the nth item.
 */
export function collector<T>(field: string, keep: (item: T) => boolean = () => true) {
  const items: T[] = [];
  const errors: unknown[] = [];
  let waiting: { count: number; resolve: () => void } | undefined;
  return {
    items,
    errors,
    sink: {
      next: ({ data, errors: failed }: { data?: Record<string, unknown> | null; errors?: unknown }) => {
        if (!data) return void errors.push(failed);
        const item = data[field] as T;
        if (!keep(item)) return;
        items.push(item);
        if (waiting && items.length >= waiting.count) waiting.resolve();
      },
      error: (error: unknown) => errors.push(error),
      complete: () => {},
    },
    until(count: number, ms = 20_000): Promise<void> {
      if (items.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${items.length} of ${count} after ${ms} ms: ${JSON.stringify(items)} ${JSON.stringify(errors)}`)), ms);
        waiting = {
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
      });
    },
  };
}

/** A moment for a duplicate or a stray item to show. */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
