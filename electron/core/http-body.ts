// What the gateway and relay clients share about reading an HTTP answer with undici.

/** Reads at most `limit` bytes of a body as text: no answer we expect is anywhere near it. */
export async function readLimited(body: AsyncIterable<Buffer | Uint8Array> & { destroy(): unknown }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(Buffer.from(chunk));
    size += chunk.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The system or undici code of a network error ("ECONNREFUSED", "UND_ERR_SOCKET"…), if it has one. */
export function networkErrorCode(e: unknown): string | undefined {
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : undefined;
  const code = (e as { code?: unknown } | null)?.code ?? (cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
