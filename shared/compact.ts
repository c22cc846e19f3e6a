// Objects without their undefined members, as JSON would write them and as optional members are
// meant (absent, never undefined). On the relay's path for every webhook, so a plain loop.

/** A shallow copy of `o` without the own members whose value is undefined. */
export function compact<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(o)) {
    const value = (o as Record<string, unknown>)[key];
    if (value === undefined) continue;
    // A member named __proto__ stays a member, as Object.fromEntries would make it.
    if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  }
  return out as T;
}
