// Objects without their undefined members, as JSON would write them and as optional members are
// meant (absent, never undefined).

/** A shallow copy of `o` without the own members whose value is undefined. */
export function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, value]) => value !== undefined)) as T;
}
