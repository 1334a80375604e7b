/**
 * One query for a field that every item of a list resolves (a dataloader's core, without its cache): the
 * resolvers of a page's items run one after another in the same tick, each asks for its key here, and the
 * keys gathered by the end of that tick go to `load` together. Without it a page of 50 applications asks
 * for 50 timelines and 50 applicants one round trip at a time.
 *
 * Batches live as long as the operation's context (a WeakMap on it), one per `name`; each resolver passes
 * the same `load` for a name, which reads what it needs (the viewer, the services) from its own closure.
 */

/** Answers each key's value, in the order of the keys (a dataloader's contract). */
type Load<K, V> = (keys: readonly K[]) => Promise<readonly V[]>;

interface Pending<K, V> {
  keys: K[];
  waiting: Map<K, { resolve: (value: V) => void; reject: (error: unknown) => void }[]>;
}

const batchesOf = new WeakMap<object, Map<string, Pending<unknown, unknown>>>();

/**
 * Resolves to what `load` answers for `key`, loading every key asked under `name` in this tick of this
 * operation (`context`) at once. A key asked twice is loaded once.
 */
export function batched<K, V>(context: object, name: string, load: Load<K, V>, key: K): Promise<V> {
  let batches = batchesOf.get(context);
  if (!batches) batchesOf.set(context, (batches = new Map()));
  let pending = batches.get(name) as Pending<K, V> | undefined;
  if (!pending) {
    const fresh: Pending<K, V> = { keys: [], waiting: new Map() };
    batches.set(name, fresh as Pending<unknown, unknown>);
    // After the promise jobs queued so far (sibling resolvers that awaited something synchronous-fast),
    // then the next tick: the same moment a dataloader dispatches.
    void Promise.resolve().then(() => process.nextTick(() => void dispatch(batches, name, fresh, load)));
    pending = fresh;
  }
  const found = pending;
  return new Promise((resolve, reject) => {
    const waiters = found.waiting.get(key);
    if (waiters) waiters.push({ resolve, reject });
    else {
      found.keys.push(key);
      found.waiting.set(key, [{ resolve, reject }]);
    }
  });
}

async function dispatch<K, V>(batches: Map<string, Pending<unknown, unknown>>, name: string, pending: Pending<K, V>, load: Load<K, V>): Promise<void> {
  if (batches.get(name) === (pending as Pending<unknown, unknown>)) batches.delete(name);
  try {
    const values = await load(pending.keys);
    pending.keys.forEach((key, index) => {
      for (const waiter of pending.waiting.get(key)!) waiter.resolve(values[index]!);
    });
  } catch (error) {
    for (const waiters of pending.waiting.values()) for (const waiter of waiters) waiter.reject(error);
  }
}
