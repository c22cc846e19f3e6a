// What went wrong on the network, read the same way from whatever threw it: undici's request (the
// error itself carries the code), undici's fetch and Node's fetch (a TypeError "fetch failed" whose
// cause carries it). Pure: it reads `code`, `cause.code`, messages and names, nothing of the
// environment. Each client says each kind in its own words; what the kinds are is decided here only.

/** What the network did, as far as the words shown for it differ. */
export type NetworkFailureKind = 'refused' | 'host_not_found' | 'reset' | 'connect_timeout' | 'bad_certificate' | 'other';

export type NetworkFailure =
  | {
      kind: Exclude<NetworkFailureKind, 'other'>;
      /** The system, TLS or undici code the kind was read from. */
      code: string;
      /** The words of the error that carries the code. */
      message: string;
    }
  | {
      kind: 'other';
      /** The code of an error no kind above covers ("UND_ERR_DESTROYED"), when it has one. */
      code?: string;
      /** The words of the error that carries the code; with no code, its cause's (fetch's own "fetch failed" says nothing), else its own. */
      message: string;
    };

const KIND_OF_CODE: ReadonlyMap<string, Exclude<NetworkFailureKind, 'other'>> = new Map([
  ['ECONNREFUSED', 'refused'],
  ['ENOTFOUND', 'host_not_found'],
  ['EAI_AGAIN', 'host_not_found'],
  ['ECONNRESET', 'reset'],
  // undici: the server closed the socket before the answer was whole ("other side closed").
  ['UND_ERR_SOCKET', 'reset'],
  ['UND_ERR_CONNECT_TIMEOUT', 'connect_timeout'],
  ['CERT_HAS_EXPIRED', 'bad_certificate'],
  ['DEPTH_ZERO_SELF_SIGNED_CERT', 'bad_certificate'],
  ['SELF_SIGNED_CERT_IN_CHAIN', 'bad_certificate'],
  ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'bad_certificate'],
  ['ERR_TLS_CERT_ALTNAME_INVALID', 'bad_certificate'],
]);

const codeOf = (x: unknown): string | undefined => {
  const code = typeof x === 'object' && x !== null && 'code' in x ? x.code : undefined;
  return typeof code === 'string' ? code : undefined;
};

const wordsOf = (x: unknown): string => (x instanceof Error ? x.message || x.name : String(x));

/** The failure a thrown network error describes: its kind, its code (its own, else its cause's) and its words. */
export function classifyNetworkError(e: unknown): NetworkFailure {
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : undefined;
  const carrier = [e, cause].find((x) => codeOf(x) !== undefined);
  const code = codeOf(carrier);
  const message = wordsOf(carrier ?? cause ?? e);
  if (code === undefined) return { kind: 'other', message };
  const kind = KIND_OF_CODE.get(code);
  return kind === undefined ? { kind: 'other', code, message } : { kind, code, message };
}
