// The clock arithmetic of RTCP sender and receiver reports (RFC 3550 4 and 6.4): NTP timestamps from
// the wall clock, their compact middle 32 bits, and the round trip a receiver report tells.

/** Seconds from the NTP epoch (1900) to the Unix epoch (1970). */
const NTP_UNIX_OFFSET_S = 2_208_988_800n;

/** The 64-bit NTP timestamp of a Unix time in milliseconds: seconds above, the fraction below. */
export function ntpFromUnixMs(unixMs: number): bigint {
  const wholeMs = Math.floor(unixMs);
  const seconds = BigInt(Math.floor(wholeMs / 1000)) + NTP_UNIX_OFFSET_S;
  const fraction = BigInt(Math.round((((wholeMs % 1000) + (unixMs - wholeMs)) / 1000) * 2 ** 32)) & 0xffff_ffffn;
  return ((seconds & 0xffff_ffffn) << 32n) | fraction;
}

/** The middle 32 bits of an NTP timestamp: what a receiver report echoes as LSR (RFC 3550 6.4.1). */
export const compactNtp = (ntp: bigint): number => Number((ntp >> 16n) & 0xffff_ffffn);

/**
 * The round trip a receiver report tells, in ms: its arrival, less the sender report it echoes
 * (LSR) and the time the receiver held it (DLSR), all in 1/65536 s (RFC 3550 6.4.1). Undefined when
 * the report echoes no sender report, or the sum makes no sense (clocks are not that far off).
 */
export function roundTripMs(lsr: number, dlsr: number, arrivedUnixMs: number): number | undefined {
  if (lsr === 0) return undefined;
  const units = (compactNtp(ntpFromUnixMs(arrivedUnixMs)) - lsr - dlsr) >>> 0;
  // More than half the 16-bit seconds range is a negative round trip, i.e. nonsense.
  if (units >= 0x8000_0000) return undefined;
  return (units / 65_536) * 1000;
}
