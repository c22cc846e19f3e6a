// The order statistics every bench reports: the nearest-rank percentile, and the median as its 50th.

/** Nearest rank over values already sorted ascending; NaN for none. */
export const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

export const median = (values: readonly number[]): number => percentile([...values].sort((a, b) => a - b), 50);
