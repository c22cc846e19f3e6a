// werift's DTLS client waits a fixed 100 ms after ICE connects before it says hello
// (RTCDtlsTransport.start in werift 0.24). The bridge is the DTLS client on every incoming call's
// customer leg (`a=setup:active`, protocol.md), so that wait would sit on the Answer's critical path:
// a window (Chromium) says hello the moment ICE connects. Here the hello goes out as soon as the
// transport's DTLS client exists; werift's own call after its wait then finds the handshake under
// way and joins it rather than starting a second one.
import { DtlsClient, type RTCPeerConnection } from 'werift';

type Connect = () => Promise<void>;

const handshakes = new WeakMap<DtlsClient, Promise<void>>();
let patched = false;

/** Makes DtlsClient.connect idempotent per client: the first call starts the handshake, later ones wait for it. */
function joinRepeatedHellos(): void {
  if (patched) return;
  patched = true;
  const prototype = DtlsClient.prototype as unknown as { connect: Connect };
  const original = prototype.connect;
  prototype.connect = function (this: DtlsClient): Promise<void> {
    let handshake = handshakes.get(this);
    if (handshake === undefined) {
      handshake = original.call(this);
      handshakes.set(this, handshake);
    }
    return handshake;
  };
}

/** How long to look for the transport's DTLS client after ICE connected (it is made right after). */
const LOOK_FOR_CLIENT_MS = 50;

/** Says the DTLS hello of `pc`'s transports as soon as ICE connects, wherever this side is the DTLS client. */
export function helloOnceIceConnects(pc: RTCPeerConnection): void {
  joinRepeatedHellos();
  const subscription = pc.iceConnectionStateChange.subscribe((state) => {
    // Only 'connected': werift says 'completed' once before its checks even begin.
    if (state !== 'connected') return;
    subscription.unSubscribe();
    const started = performance.now();
    const look = (): void => {
      let waiting = false;
      for (const transport of pc.dtlsTransports) {
        if (transport.dtls instanceof DtlsClient) {
          // Failures surface through werift's own call, which waits for this same handshake.
          transport.dtls.connect().catch(() => undefined);
        } else if (transport.dtls === undefined && transport.role !== 'server') {
          waiting = true;
        }
      }
      if (waiting && performance.now() - started < LOOK_FOR_CLIENT_MS) setTimeout(look, 1);
    };
    look();
  });
}
