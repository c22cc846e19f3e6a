// Reading Content-Security-Policy texts in tests: the page's meta tag, and a policy as directives.

/** The policy in a page's `<meta http-equiv="Content-Security-Policy" content="…">`; undefined when it has none. */
export function metaPolicy(html: string): string | undefined {
  const tag = /<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]*)"\s*\/?>/i.exec(html);
  return tag?.[1];
}

/** A policy as directive name → source list, in order; a directive named twice throws (the browser would ignore the second). */
export function directives(policy: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const part of policy.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name === undefined || name === '') continue;
    if (map.has(name)) throw new Error(`${name} is named twice in ${policy}`);
    map.set(name, sources);
  }
  return map;
}
