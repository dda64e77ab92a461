// Mailed tokens and one-time codes work once: a call made with one is made once per page load, even
// when a component mounts twice (React's development double mount, a re-render with the same token).
const calls = new Map<string, Promise<unknown>>();

export function once<T>(key: string, call: () => Promise<T>): Promise<T> {
  let found = calls.get(key) as Promise<T> | undefined;
  if (!found) {
    found = call();
    calls.set(key, found);
  }
  return found;
}
